"""Warm start: a new model's variables initialized from another model's checkpoint."""

import dataclasses
import re
from typing import Mapping

import tensorflow as tf
from absl import logging

from common.state.checkpoints import (CheckpointMismatchError, describe, missing_and_reshaped, read_values, resolve,
                                      variable_shapes)


@dataclasses.dataclass
class WarmStartSettings:
    """Initialize matching variables from another model's checkpoint.

    vars_to_warm_start, as tf.estimator read it: a regex matched (re.match)
    against the names of the trainable model variables, e.g. "backbone/" to
    take a backbone and leave a new head alone; a list of regexes, matched
    against every model variable (batch-norm statistics too); None: none.
    """

    ckpt_to_initialize_from: str
    vars_to_warm_start: object = ".*"


def _warm_start_names(vars_to_warm_start, model_names, trainable_names):
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [n for n in trainable_names if pattern.match(n)]
    patterns = [re.compile(p) for p in vars_to_warm_start]
    return [n for n in model_names if any(p.match(n) for p in patterns)]


def warm_start(settings, variables: Mapping[str, tf.Variable], model_names, trainable_names):
    """Copies the matched model variables from the settings' checkpoint, all or
    nothing: every name and shape is checked and every value read first."""
    path = resolve(settings.ckpt_to_initialize_from, "warm_start_from")
    names = _warm_start_names(settings.vars_to_warm_start, model_names, trainable_names)
    missing, reshaped = missing_and_reshaped(variable_shapes(path), variables, names)
    if missing:
        raise CheckpointMismatchError(
            f"warm start from {path}: variables matching {settings.vars_to_warm_start!r} "
            f"are not in that checkpoint: {describe(missing)}"
        )
    if reshaped:
        raise CheckpointMismatchError(f"warm start from {path}: shapes differ for {describe(reshaped)}")
    values = read_values(path, names)
    for name in names:
        variables[name].assign(values[name])
    logging.info("Warm-started %d variable(s) from %s", len(names), path)
    return names
