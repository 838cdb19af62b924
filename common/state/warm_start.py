"""Warm start: a new model's variables initialized from another model's checkpoint."""

import dataclasses
import re
from typing import Mapping, Optional

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state.checkpoints import (
    CheckpointMismatchError,
    describe,
    missing_and_reshaped,
    read_values,
    resolve,
    variable_shapes,
)


@dataclasses.dataclass
class WarmStartSettings:
    """Which variables of a new model start from another model's checkpoint, as tf.estimator's
    WarmStartSettings (Estimator(warm_start_from=...)); used only when the model dir has no checkpoint.

    Args:
      ckpt_to_initialize_from: the checkpoint: a prefix, or a directory (its latest).
      vars_to_warm_start: as tf.estimator read it: a regex matched (re.match) against the names of the
        trainable model variables, e.g. "backbone/" to take a backbone and leave a new head alone; a list of
        regexes, matched against every model variable (batch-norm statistics too); None: none.
      var_name_to_vocab_info: not supported (a vocabulary remap): refused by name.
      var_name_to_prev_var_name: {model variable name: its name in the checkpoint}, for variables named
        otherwise there.
    Raises:
      NotImplementedError: var_name_to_vocab_info is given.
    """

    ckpt_to_initialize_from: str
    vars_to_warm_start: object = ".*"
    var_name_to_vocab_info: Optional[dict] = None
    var_name_to_prev_var_name: Optional[dict] = None

    def __post_init__(self):
        if self.var_name_to_vocab_info:
            raise NotImplementedError(
                f"WarmStartSettings(var_name_to_vocab_info=...) for {sorted(self.var_name_to_vocab_info)}: "
                "remapping rows to a new vocabulary is not kept here; warm-start those variables from a "
                "checkpoint trained on the same vocabulary, or leave them out of vars_to_warm_start")


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
    previous = dict(settings.var_name_to_prev_var_name or {})
    unused = sorted(set(previous) - set(names))
    if unused:
        raise ValueError(f"warm start from {path}: var_name_to_prev_var_name names {describe(unused)}, which "
                         f"vars_to_warm_start={settings.vars_to_warm_start!r} does not take from this model")
    in_checkpoint = variable_shapes(path)
    source = {name: previous.get(name, name) for name in names}
    saved = {name: in_checkpoint[source[name]] for name in names if source[name] in in_checkpoint}
    missing, reshaped = missing_and_reshaped(saved, variables, names)
    missing = [f"{n} (as {previous[n]})" if n in previous else n for n in missing]
    if missing:
        raise CheckpointMismatchError(
            f"warm start from {path}: variables matching {settings.vars_to_warm_start!r} "
            f"are not in that checkpoint: {describe(missing)}"
        )
    if reshaped:
        raise CheckpointMismatchError(f"warm start from {path}: shapes differ for {describe(reshaped)}")
    values = read_values(path, list(source.values()))
    for name in names:
        variables[name].assign(values[source[name]])
    logging.info("Warm-started %d variable(s) from %s", len(names), path)
    return names
