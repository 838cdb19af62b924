"""A partitioned variable's TF1 optimizer slots as tf.estimator 2.15 saved them: one name per part.

TF 2.15's v1 premade estimators named each part's slot after the part's
partition, "<variable>/t_<k>/<slot>" ("embedding_weights/t_1/Adagrad"), and
gave every such name the whole variable's shape but only part k's slice:
none of the names reads whole, and TF 2.15 read them back slice by slice.
This project holds the variable (and so its slot) whole; it reads the slot
by joining slice k of name k, and writes the whole slot under every name,
from which TF 2.15 reads each part's slice again.
"""

import numpy as np
import tensorflow as tf


class PerPartNames(tuple):
    """The checkpoint names of one slot, part k's slice in name k (a tuple of str, in part order)."""


def per_part_names(variable, suffix, saved):
    """PerPartNames of the slot `suffix` of `variable` when `saved` (the checkpoint's names) holds it per part
    (two names or more), else None."""
    names = []
    while f"{variable}/t_{len(names)}/{suffix}" in saved:
        names.append(f"{variable}/t_{len(names)}/{suffix}")
    return PerPartNames(names) if len(names) > 1 else None


def part_bounds(length, count):
    """(start, size) of each of `count` parts of `length` rows, TF1's way: the first (length % count) parts one
    row larger."""
    bounds, start = [], 0
    for i in range(count):
        size = length // count + (1 if i < length % count else 0)
        bounds.append((start, size))
        start += size
    return bounds


def read_whole(path, names, shape, dtype):
    """The whole slot: slice k of names[k] joined along the axis TF1 partitioned (the first that reads).

    Args:
      path: the checkpoint prefix.
      names: its PerPartNames.
      shape: the whole slot's shape (the shape each name is listed with).
      dtype: its dtype.
    Returns:
      a numpy array of `shape`.
    Raises:
      tf.errors.OpError: when no axis gives slices the checkpoint holds.
    """
    error = None
    for axis, length in enumerate(shape):
        if length < len(names):
            continue
        try:
            pieces = [_read_slice(path, name, shape, dtype, axis, start, size)
                      for name, (start, size) in zip(names, part_bounds(length, len(names)))]
        except tf.errors.OpError as failed:
            error = failed
            continue
        return np.concatenate(pieces, axis=axis)
    raise error or tf.errors.InvalidArgumentError(None, None, f"{names[0]} of shape {shape} has fewer rows than "
                                                              f"its {len(names)} parts")


def _read_slice(path, name, shape, dtype, axis, start, size):
    spec = ":".join(f"{start},{size}" if a == axis else "-" for a in range(len(shape)))
    value, = tf.raw_ops.RestoreV2(prefix=path, tensor_names=[name],
                                  shape_and_slices=[" ".join(str(d) for d in shape) + " " + spec], dtypes=[dtype])
    return value.numpy()


def each_name(saved_name):
    """The checkpoint names one saved name stands for: a PerPartNames' names, else the name itself."""
    return tuple(saved_name) if isinstance(saved_name, PerPartNames) else (saved_name,)
