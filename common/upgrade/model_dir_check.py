"""`python -m common.upgrade --check_model_dir=DIR`: what a model dir holds and how this project will read it.

A team moving from tf.estimator asks, before pointing an upgraded program at
a model dir under training: whose checkpoint is this, what will be read under
another name, and will tf.estimator be able to take the dir back? This reads
the dir's newest checkpoint (nothing is written) and says so, grouping its
names the way common.state.tf_estimator_names reads them.
"""

import collections
import glob
import os
import re

import tensorflow as tf

from common.state import checkpoints, part_slots, tf_estimator_names

_PARTITION_SLOT = re.compile(r"^(.+)/t_(\d+)/([^/]+)$")  # <variable>/t_<k>/<slot>


def _groups(names):
    """{group description: [names]} of a tf.estimator checkpoint's names."""
    groups = collections.defaultdict(list)
    for name in sorted(names):
        if name == checkpoints.GLOBAL_STEP or name.startswith("estimator_global_step"):
            groups["the global step"].append(name)
        elif name in checkpoints.TF_ESTIMATOR_BOOKKEEPING:
            groups["tf.estimator's bookkeeping (ignored)"].append(name)
        elif name.startswith(tf_estimator_names.KERAS2_SCOPE):
            optimizer = name.split("/")[1]
            groups[f"a Keras 2 {optimizer} optimizer's state (a premade estimator's): read as the project's "
                   f"optimizer state"].append(name)
        elif "/.OPTIMIZER_SLOT/" in name or name.startswith("optimizer/"):
            groups["a Keras optimizer's state, object by object (model_to_estimator's)"].append(name)
        elif name.endswith(tf_estimator_names.ATTRIBUTE):
            groups["a Keras model's weights, object by object (model_to_estimator's): read by layer order"].append(
                name)
        elif _PARTITION_SLOT.match(name) and _PARTITION_SLOT.match(name).group(1) in names:
            per_part = part_slots.per_part_names(*_PARTITION_SLOT.match(name).group(1, 3), names)
            groups["a TF1 optimizer's slots under the variable's partition (a v1 premade's): read as its slots" + (
                "; a partitioned variable's, one name per part, joined" if per_part else "")].append(name)
        elif ("/" in name and name.rsplit("/", 1)[0] in names) or \
                tf_estimator_names.TF1_NON_SLOT.match(name.rsplit("/", 1)[-1]):
            groups["a TF1 optimizer's slots and accumulators: read as they are"].append(name)
        else:
            groups["model variables (Keras layers built in model_fn are read as model_fn/<name>)"].append(name)
    return groups


def report(model_dir):
    """The lines --check_model_dir prints for model_dir."""
    latest = tf.train.latest_checkpoint(model_dir)
    if latest is None:
        return [f"{model_dir}: no checkpoint: a program pointed here starts a new model"]
    saved = checkpoints.variable_shapes(latest)
    lines = [f"{model_dir}: newest checkpoint {os.path.basename(latest)} (step {checkpoints.step_of(latest)}), "
             f"{len(saved)} tensors"]
    if checkpoints.optimizer_state_names(latest):
        return lines + ["written by this project: it resumes, evaluates, predicts and exports as it is"]
    by_object = any(name.endswith(tf_estimator_names.ATTRIBUTE) for name in saved)
    lines.append("written by tf.estimator" + (" (model_to_estimator, object-based)" if by_object else ""))
    shards = glob.glob(latest + ".data-*-of-*")
    if len(shards) > 1:
        lines.append(f"  in {len(shards)} data files (a sharded Saver's, one per device): read as one checkpoint")
    beside = [os.path.basename(p) for p in sorted(glob.glob(os.path.join(model_dir, "graph.pbtxt")) +
                                                  glob.glob(os.path.join(model_dir, "events.out.tfevents.*")))]
    if beside:
        lines.append(f"  beside it {', '.join(beside[:3])}{' and more' if len(beside) > 3 else ''}: kept; "
                     "this project's events go to a file of their own beside them")
    for group, names in _groups(saved).items():
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        lines.append(f"  {len(names)} {group}: {shown}")
    lines.append("evaluate, predict and export read the model's weights and leave the optimizer state")
    lines.append("training resumes it and writes " + (
        "the project's names (tf.estimator 2.15 cannot read them back: keep a copy to roll back)" if by_object else
        "tf.estimator's names on, with what the model does not read carried unchanged: tf.estimator 2.15 can "
        "take the dir back"))
    return lines
