"""TF1's partitioned variables (`get_variable(partitioner=...)`), sharded over a parameter-server job's ps tasks.

A TF1 program split big variables (embeddings, wide linear weights) into
parts with a partitioner (`fixed_size_partitioner`, `min_max_variable_partitioner`,
the premade estimators' `input_layer_partitioner`), so that a
parameter-server job spread them over its ps tasks; its checkpoint held each
such variable whole, under its own name, the parts writing their slices of
it. Here a variable is split where that places it on several tasks: on a
parameter-server job's chief, building under its strategy, which puts each
part ("<name>/part_<i>") on a ps task in turn. Elsewhere one device would
hold every part, and the variable is made whole. Each part records its slice
of the whole (TensorFlow's SaveSliceInfo, which TF1's Saver reads), so the
checkpoints hold the whole variable either way: a job restarts with another
count of ps tasks, and one host reads its checkpoints.
"""

import inspect

import numpy as np
import tensorflow as tf

from common.internals import tensorflow_internals
from common.state import part_slots

PartitionedVariable = tensorflow_internals.PartitionedVariable
TF1_MIN_SLICE_BYTES = 64 << 20  # the premade estimators' default: a part holds at least 64 MiB


def _ps_count():
    """The ps tasks of the parameter-server strategy variables are being made under, else 0."""
    if not tf.distribute.has_strategy():
        return 0
    strategy = tf.distribute.get_strategy()
    if not isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
        return 0
    # (TensorFlow's public strategy.cluster_resolver is None for this strategy, which keeps the count itself)
    return getattr(strategy.extended, "_num_ps", 0)


def sharding_partitions(partitioner, name, shape, dtype):
    """The partitions (a count per axis) `partitioner` gives the variable where it is sharded (see the module),
    else None: the variable is made whole."""
    if partitioner is None or _ps_count() < 2:
        return None
    shape = tf.TensorShape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"the partitioned variable {name} needs a fully defined shape, got {shape}")
    partitions = [int(p) for p in partitioner(shape=shape, dtype=tf.as_dtype(dtype))]
    if len(partitions) != shape.rank or min(partitions) < 1 or sum(p > 1 for p in partitions) > 1:
        raise ValueError(f"the partitioner of {name} (shape {shape}) gave partitions {partitions}: give one count "
                         "per dimension, each at least 1, more than 1 in one dimension at most")
    axis = max(range(len(partitions)), key=lambda a: partitions[a])
    if partitions[axis] > shape[axis]:
        raise ValueError(f"the partitioner of {name} splits dimension {axis} of {shape} into {partitions[axis]} "
                         "parts: more parts than rows")
    return partitions if partitions[axis] > 1 else None


def partitions_made(name, shape, made):
    """The partitions a variable was made in by an earlier call (`made`: full name -> variable), else None: a
    parameter-server job's chief evaluates and exports outside its strategy, on the parts training made."""
    count = 0
    while f"{name}/part_{count}" in made:
        count += 1
    if count < 2:
        return None
    shape, part = tf.TensorShape(shape).as_list(), made[f"{name}/part_0"].shape.as_list()
    axis = next((a for a, (whole, first) in enumerate(zip(shape, part)) if whole != first), 0)
    return [count if a == axis else 1 for a in range(len(part))]


def slices(shape, partitions):
    """(offset, shape) of each part, TF1's way: the first (size % count) parts one row larger."""
    shape = tf.TensorShape(shape).as_list()
    axis = max(range(len(partitions)), key=lambda a: partitions[a])
    found = []
    for start, size in part_slots.part_bounds(shape[axis], partitions[axis]):
        offset = [0] * len(shape)
        offset[axis] = start
        found.append((offset, shape[:axis] + [size] + shape[axis + 1:]))
    return found


def part_initializer(initializer, full_shape, offset, part_shape):
    """The initializer of one part: a TF1 initializer told which part (it scales by the whole variable's
    fans), another called for the part's shape, a value (or a constant initializer's value of the whole shape,
    a pretrained table) sliced."""
    whole = getattr(initializer, "value", None) if callable(initializer) else initializer
    if whole is not None and np.size(whole) == tf.TensorShape(full_shape).num_elements():
        return tf.slice(tf.reshape(tf.convert_to_tensor(whole), full_shape), offset, part_shape)
    if not callable(initializer):
        raise ValueError(f"a value of {np.size(whole)} elements cannot initialize a variable of shape "
                         f"{tf.TensorShape(full_shape)}")
    try:
        takes_partition = "partition_info" in inspect.signature(initializer).parameters
    except (TypeError, ValueError):  # (a builtin without a signature)
        takes_partition = False
    if not takes_partition:
        return initializer
    info = tensorflow_internals.PartitionInfo(full_shape=tf.TensorShape(full_shape).as_list(), var_offset=offset)
    return lambda shape, dtype=None, **kwargs: initializer(shape, dtype=dtype, partition_info=info)


def mark_part(part, full_name, full_shape, offset):
    """Records the part's slice of the whole variable, which the checkpoints hold under `full_name`."""
    tensorflow_internals.set_save_slice_info(part, tensorflow_internals.SaveSliceInfo(
        full_name=full_name, full_shape=tf.TensorShape(full_shape).as_list(), var_offset=list(offset),
        var_shape=part.shape.as_list()))


def mark_slot(slot, primary, slot_name):
    """A TF1 optimizer's slot of a part ("<name>/part_<i>/Adagrad") is that part of the whole variable's slot
    ("<name>/Adagrad"), as TF1's slot creator recorded it."""
    info = tensorflow_internals.save_slice_info(primary)
    if info is not None and slot.shape == primary.shape:
        mark_part(slot, f"{info.full_name}/{slot_name.rsplit('/', 1)[-1]}", info.full_shape, info.var_offset)


def default_partitioner(min_slice_size=TF1_MIN_SLICE_BYTES):
    """The premade estimators' partitioner when none is given: TF1's min_max_variable_partitioner over the
    job's ps tasks (parts of at least `min_slice_size` bytes)."""
    def partitioner(shape, dtype):
        return tf.compat.v1.min_max_variable_partitioner(max_partitions=max(_ps_count(), 1),
                                                         min_slice_size=min_slice_size)(shape=shape, dtype=dtype)
    return partitioner
