"""Warm start: a new model's variables initialized from another model's checkpoint."""

import dataclasses
import re
from typing import Mapping, Optional

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state import tf_estimator_names
from common.state.checkpoints import (MODEL_FN_SCOPE, CheckpointMismatchError, describe, missing_and_reshaped,
                                      read_values, resolve, variable_shapes)


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


def tf_estimator_name(name):
    """The name tf.estimator 2.15 gave a model variable: a layer model_fn builds is "model_fn/<path>" here and
    "<path>" there (its other names are the same)."""
    return name[len(MODEL_FN_SCOPE) + 1:] if name.startswith(MODEL_FN_SCOPE + "/") else name


def _matches(pattern, name):
    return bool(pattern.match(name) or pattern.match(tf_estimator_name(name)))


def _warm_start_names(vars_to_warm_start, model_names, trainable_names):
    """The model names vars_to_warm_start takes; a regex matches a name as written here or as tf.estimator 2.15
    wrote it, as programs ported from it wrote their regexes."""
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [n for n in trainable_names if _matches(pattern, n)]
    patterns = [re.compile(p) for p in vars_to_warm_start]
    return [n for n in model_names if any(_matches(p, n) for p in patterns)]


def _previous_names(previous, model_names):
    """var_name_to_prev_var_name keyed by model names here: a key may be the name tf.estimator 2.15 gave the
    variable ("sequential/logits_new/bias" for "model_fn/sequential/logits_new/bias")."""
    by_tf_name = {tf_estimator_name(name): name for name in model_names}
    return {name if name in model_names else by_tf_name.get(name, name): old for name, old in previous.items()}


def _source_names(names, previous, in_checkpoint):
    """{model name: its name in the checkpoint}: the previous name given (in this project's form or tf.estimator
    2.15's, whichever the checkpoint holds), else the name itself, else tf.estimator 2.15's name for it."""
    tf_estimator = tf_estimator_names.saved_names(in_checkpoint, [n for n in names if n not in previous])
    sources = {}
    for name in names:
        if name in previous:  # (given as written here or by tf.estimator 2.15, for a checkpoint of either)
            old = previous[name]
            candidates = (old, f"{MODEL_FN_SCOPE}/{old}", tf_estimator_name(old))
            sources[name] = next((c for c in candidates if c in in_checkpoint), old)
        else:
            sources[name] = name if name in in_checkpoint else tf_estimator.get(name, name)
    return sources


def warm_start(settings, variables: Mapping[str, tf.Variable], model_names, trainable_names):
    """Copies the matched model variables from the settings' checkpoint, all or nothing: every name and shape
    is checked and every value read first. The checkpoint may be tf.estimator 2.15's, and names given in
    settings may be the ones it used."""
    path = resolve(settings.ckpt_to_initialize_from, "warm_start_from")
    names = _warm_start_names(settings.vars_to_warm_start, model_names, trainable_names)
    previous = _previous_names(dict(settings.var_name_to_prev_var_name or {}), model_names)
    unused = sorted(set(previous) - set(names))
    if unused:
        raise ValueError(f"warm start from {path}: var_name_to_prev_var_name names {describe(unused)}, which "
                         f"vars_to_warm_start={settings.vars_to_warm_start!r} does not take from this model")
    in_checkpoint = variable_shapes(path)
    source = _source_names(names, previous, in_checkpoint)
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
