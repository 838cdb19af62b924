"""Tower arithmetic: a batch split over the towers, and what the towers
computed brought back together on a chosen device.

This is the TF2 form of what the official CIFAR-10 estimator example did by
hand: each tower runs on its shard of the global batch, and each variable's
gradients are averaged on the device that holds the variable.
"""

import numpy as np
import tensorflow as tf

from common.devices.plan import HOST_DEVICE


def _batch_size(leaves):
    sizes = {leaf.shape[0] for leaf in leaves if leaf.shape.rank and leaf.shape[0] is not None}
    if len(sizes) > 1:
        raise ValueError(f"the batch's tensors disagree on the batch size: {sorted(sizes)}")
    return sizes.pop() if sizes else tf.shape(leaves[0])[0]


def split_batch(batch, num_shards, allow_uneven=False, device=HOST_DEVICE):
    """Splits every tensor of a nested batch along axis 0 into `num_shards`, one shard per tower.

    Args:
      batch: a nest (tf.nest) of tensors, or values tf.convert_to_tensor takes, all with the same first
        (batch) dimension; None leaves (labels of none) stay None in every shard.
      num_shards: the number of towers; 1 returns [batch] as it is.
      allow_uneven: with it (eval and predict, whose last batch may be short) the first `n % num_shards` shards
        get one example more; without it a batch that `num_shards` does not divide is an error.
      device: the device the split runs on (default the host's CPU).

    Returns:
      A list of `num_shards` structures like `batch`, in input order.

    Raises:
      ValueError: a batch whose static size `num_shards` does not divide (without allow_uneven), or whose
        tensors' static batch sizes differ. With a size known only when run, the check is an assertion:
        tf.errors.InvalidArgumentError then.
    """
    if num_shards == 1:
        return [batch]
    with tf.device(device):
        flat = tf.nest.flatten(batch)
        leaves = [tf.convert_to_tensor(leaf) for leaf in flat if leaf is not None]  # None: labels of none
        size = _batch_size(leaves)
        if isinstance(size, int):
            if size % num_shards and not allow_uneven:
                raise ValueError(
                    f"a batch of {size} examples cannot be split evenly over "
                    f"{num_shards} towers; make the batch size a multiple of {num_shards}"
                )
            base, extra = divmod(size, num_shards)
            sizes = [base + 1] * extra + [base] * (num_shards - extra)
        elif allow_uneven:
            base, extra = size // num_shards, size % num_shards
            sizes = base + tf.cast(tf.range(num_shards) < extra, size.dtype)
        else:
            tf.debugging.assert_equal(
                size % num_shards,
                0,
                message=f"the batch size must be a multiple of the number of towers ({num_shards})",
            )
            sizes = [size // num_shards] * num_shards
        pieces = iter([tf.split(leaf, sizes, axis=0, num=num_shards) for leaf in leaves])
        pieces = [None if leaf is None else next(pieces) for leaf in flat]
    return [tf.nest.pack_sequence_as(batch, [None if p is None else p[i] for p in pieces]) for i in range(num_shards)]


def _device_of(variable):
    return getattr(variable, "device", None) or HOST_DEVICE


def mean_on(device, values, count=None):
    """The mean of the towers' values (tensors of one shape, or IndexedSlices
    and tensors of one variable's gradient), computed on `device`: their sum
    over `count` (default: how many there are)."""
    count = count or len(values)
    with tf.device(device):
        if not any(isinstance(v, tf.IndexedSlices) for v in values):
            return tf.math.add_n(values) / count
        slices = [v if isinstance(v, tf.IndexedSlices) else tf.IndexedSlices(
            v, tf.range(tf.shape(v)[0]), tf.shape(v, out_type=tf.int64)) for v in values]
        return tf.IndexedSlices(
            tf.concat([s.values for s in slices], 0) / count,
            tf.concat([tf.cast(s.indices, tf.int64) for s in slices], 0),
            slices[0].dense_shape,
        )


def whole_batch_value(values, device=HOST_DEVICE):
    """One value of a tensor every tower computed on its shard: the mean of
    floating scalars, tower 0's other scalars, others concatenated along the
    batch axis."""
    first = values[0]
    if len(values) == 1:
        return first
    if first.shape.rank == 0:
        return mean_on(device, values) if first.dtype.is_floating else first
    with tf.device(device):
        return tf.concat(values, axis=0)


def average_gradients(tower_grads, variables):
    """Averages each variable's tower gradients on the variable's own device.

    Args:
      tower_grads: one list per tower, aligned with `variables` (None where a
        variable got no gradient).
      variables: the tf.Variables the gradients belong to.
    Returns:
      A list aligned with `variables`: the mean over the towers (a tower
      without a gradient counts as a zero), or None where no tower has one.
    """
    averaged = []
    for index, variable in enumerate(variables):
        grads = [grads[index] for grads in tower_grads if grads[index] is not None]
        if not grads:
            averaged.append(None)
            continue
        averaged.append(mean_on(_device_of(variable), grads, len(tower_grads)))
    return averaged


def integer_state_offset(values, tower_index):
    """The values with tower_index added to each integer value's first element: compiled towers start from
    one read of the state, and a Keras seed generator's state so shifted draws other random numbers."""
    shifted = []
    for value in values:
        if value.dtype.is_integer and tower_index:
            offset = np.zeros(value.shape, value.dtype.as_numpy_dtype)
            offset.flat[0] = tower_index
            value = value + offset
        shifted.append(value)
    return shifted
