"""Where a checkpoint tf.estimator wrote keeps each of this project's variables: the name map for a team's model dir.

tf.estimator 2.x and this project name a model's weights alike, except in
three places, and its optimizer state differently:
- Keras layers built inside model_fn: tf.estimator's graph named them
  "hidden/kernel", the project "model_fn/hidden/kernel".
- The premade estimators' optimizer: tf.estimator trained a Keras 2 optimizer
  and saved its state under "training/<Optimizer>/<variable>/<slot>"
  ("training/Adagrad/dnn/logits/kernel/accumulator"), its iterations being
  the global step. The project trains TF1's optimizer there (slots
  "<variable>/Adagrad") or, for an optimizer instance, a Keras 3 one
  ("model_fn/adam/dnn_logits_kernel_momentum").
- tf.compat.v1's premade estimators given a TF1 optimizer: its slots under
  the variable's partition ("dnn/logits/kernel/t_0/Adam", the project's
  "dnn/logits/kernel/Adam"; a partitioned variable's slot under each part's,
  common.state.part_slots), Adam's accumulators under the head
  ("dnn/head/beta1_power").
- model_to_estimator: tf.estimator saved the Keras model object by object
  ("layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE", the step as
  "estimator_global_step/..."), the project by name
  ("keras_model/sequential/hidden/kernel").
`saved_names` maps each project name to the checkpoint's name for it; the
state keeps its meaning (an Adagrad accumulator stays that accumulator,
Adam's m and v their moments).
"""

import re

from common.state import part_slots

ATTRIBUTE = "/.ATTRIBUTES/VARIABLE_VALUE"
KERAS2_SCOPE = "training/"
# TF1 slot suffix -> (the Keras 2 optimizer's name, its slot) holding the same state
_TF1_SLOTS = {"Adagrad": ("Adagrad", "accumulator"), "Ftrl": ("Ftrl", "accumulator"), "Ftrl_1": ("Ftrl", "linear"),
              "Adam": ("Adam", "m"), "Adam_1": ("Adam", "v"), "RMSProp": ("RMSprop", "rms"),
              "RMSProp_1": ("RMSprop", "momentum"), "Momentum": ("SGD", "momentum")}
# Keras 3 state suffix -> the Keras 2 slot holding it, by Keras 2 optimizer
_KERAS3_SLOTS = {"Adam": {"momentum": "m", "velocity": "v"}, "Adagrad": {"accumulator": "accumulator"},
                 "RMSprop": {"velocity": "rms", "momentum": "momentum", "average_gradient": "mg"},
                 "SGD": {"momentum": "momentum"}, "Ftrl": {"accumulator": "accumulator", "linear": "linear"},
                 "Adamax": {"m": "m", "norm": "v"}, "Nadam": {"momentum": "m", "velocity": "v"}}
_KERAS3_STATE = re.compile(r"^(?:model_fn/[a-z_]+|optimizer)/(?P<path>.+)_(?P<kind>momentum|velocity|accumulator|"
                           r"average_gradient|linear|norm|m)$")
_OBJECT_LAYER = re.compile(r"^layer_with_weights-(\d+)/")
TF1_NON_SLOT = re.compile(r"^beta[12]_power(_\d+)?$")  # TF1 Adam's accumulators, beside the slots
KERAS_MODEL_MODULE = "keras_model/"  # common.estimator.keras' module


def _keras2_optimizers(saved):
    return sorted({name.split("/")[1] for name in saved if name.startswith(KERAS2_SCOPE) and name.count("/") > 1})


def _flat(name):
    return name.replace("/", "_")


def _keras3_state(name, saved, optimizers, by_flat_name):
    """The Keras 2 name of a Keras 3 optimizer's state variable, or None."""
    match = _KERAS3_STATE.match(name)
    if match:
        variable = by_flat_name.get(match.group("path"))
        for optimizer in optimizers:
            slot = _KERAS3_SLOTS.get(optimizer, {}).get(match.group("kind"))
            candidate = f"{KERAS2_SCOPE}{optimizer}/{variable}/{slot}"
            if variable is not None and slot and candidate in saved:
                return candidate
    leaf = name.rsplit("/", 1)[-1]
    if name.startswith(("model_fn/", "optimizer/")) and leaf in ("iteration", "iterations", "learning_rate"):
        for optimizer in optimizers:
            keras2 = f"{KERAS2_SCOPE}{optimizer}/{'learning_rate' if leaf == 'learning_rate' else 'iter'}"
            if keras2 in saved:
                return keras2
        return "global_step" if leaf != "learning_rate" and "global_step" in saved else None
    return None


def _object_names(wanted, saved):
    """model_to_estimator's object-graph names of the wanted Keras-model variables, by layer order."""
    layers = []
    for name in wanted:
        if name.startswith(KERAS_MODEL_MODULE):
            layer = name.rsplit("/", 1)[0]
            if layer not in layers:
                layers.append(layer)
    found, by_flat_name = {}, {}
    step = "estimator_global_step" + ATTRIBUTE
    for name in wanted:
        if name == "global_step" and step in saved:
            found[name] = step
        elif name.startswith(KERAS_MODEL_MODULE):
            layer, attribute = name.rsplit("/", 1)
            candidate = f"layer_with_weights-{layers.index(layer)}/{attribute}"
            by_flat_name[_flat(name.split("/", 1)[1])] = candidate
            if candidate + ATTRIBUTE in saved:
                found[name] = candidate + ATTRIBUTE
    for name in wanted:  # the Keras optimizer's state: slots beside their variable, the rest under optimizer/
        match = _KERAS3_STATE.match(name)
        if name.startswith("optimizer/") and match and match.group("path") in by_flat_name:
            for slot in (match.group("kind"), {"momentum": "m", "velocity": "v"}.get(match.group("kind"))):
                candidate = f"{by_flat_name[match.group('path')]}/.OPTIMIZER_SLOT/optimizer/{slot}{ATTRIBUTE}"
                if candidate in saved:
                    found[name] = candidate
        elif name in ("optimizer/iteration", "optimizer/learning_rate"):
            leaf = "iter" if name.endswith("iteration") else "learning_rate"
            candidate = f"optimizer/{leaf}{ATTRIBUTE}"
            found.update({name: candidate} if candidate in saved else {name: step} if leaf == "iter" and step in saved
                         else {})
    return found


def saved_names(saved, wanted):
    """{project name: the checkpoint's name} for each wanted name the checkpoint (names `saved`) holds under
    another name (a PerPartNames for a slot saved per part); empty for a checkpoint that is not tf.estimator's."""
    found = {}
    if any(name.endswith(ATTRIBUTE) for name in saved):
        found.update(_object_names(wanted, saved))
    optimizers = _keras2_optimizers(saved)
    by_flat_name = {_flat(name): name for name in saved if not name.startswith(KERAS2_SCOPE)}
    for name in wanted:
        if name in saved or name in found:
            continue
        if name.startswith("model_fn/") and name[len("model_fn/"):] in saved:
            found[name] = name[len("model_fn/"):]
            continue
        variable, _, suffix = name.rpartition("/")
        per_part = part_slots.per_part_names(variable, suffix, saved)
        if per_part:
            found[name] = per_part
            continue
        if f"{variable}/t_0/{suffix}" in saved:  # (a v1 premade's TF1 optimizer slot, by partition)
            found[name] = f"{variable}/t_0/{suffix}"
            continue
        if TF1_NON_SLOT.match(name):
            scoped = [old for old in saved if old.endswith("/" + name)]
            if len(scoped) == 1:  # (under the v1 premade head's scope)
                found[name] = scoped[0]
                continue
        if suffix in _TF1_SLOTS:
            optimizer, slot = _TF1_SLOTS[suffix]
            candidate = f"{KERAS2_SCOPE}{optimizer}/{variable}/{slot}"
            if candidate in saved:
                found[name] = candidate
                continue
        keras2 = _keras3_state(name, saved, optimizers, by_flat_name)
        if keras2 is not None:
            found[name] = keras2
    return found
