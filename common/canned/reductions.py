"""The loss reductions a premade head takes: TF 2's and TF1's, as TF1's compute_weighted_loss reduced.

SUM_OVER_BATCH_SIZE (TF 2's default) divides the weighted sum by the number
of per-example losses, SUM (TF1's canned default) keeps it; TF1's MEAN
divides by the weights' sum and SUM_BY_NONZERO_WEIGHTS by the count of
non-zero weights (the official wide_deep's MovieLens asked for MEAN).
"""

import tensorflow as tf

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
MEAN = "weighted_mean"  # tf.compat.v1.losses.Reduction.MEAN: over the weights' sum
SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"  # ...: over the count of non-zero weights
# Every spelling a program may hold: tf.keras.losses.Reduction (upgraded to strings) and tf.compat.v1's.
_REDUCTIONS = {SUM_OVER_BATCH_SIZE: SUM_OVER_BATCH_SIZE, "weighted_sum_over_batch_size": SUM_OVER_BATCH_SIZE,
               SUM: SUM, "weighted_sum": SUM, MEAN: MEAN, SUM_BY_NONZERO_WEIGHTS: SUM_BY_NONZERO_WEIGHTS}


def loss_reduction_of(loss_reduction):
    """SUM_OVER_BATCH_SIZE, SUM or TF1's MEAN and SUM_BY_NONZERO_WEIGHTS, from any of their spellings; a clear
    error for the rest (NONE, which TF1's heads refused too)."""
    key = SUM_OVER_BATCH_SIZE if loss_reduction is None else str(loss_reduction).lower()
    if key not in _REDUCTIONS:
        raise ValueError(f"loss_reduction={loss_reduction!r}: a head reduces its loss by "
                         f"{SUM_OVER_BATCH_SIZE!r} (the default), {SUM!r}, or TF1's {MEAN!r} or "
                         f"{SUM_BY_NONZERO_WEIGHTS!r}")
    return _REDUCTIONS[key]


def reduced(unweighted, weights, reduction):
    """The per-example losses (times their weights, when given) reduced as `reduction` says."""
    weighted = unweighted if weights is None else unweighted * weights
    total = tf.reduce_sum(weighted)
    if reduction == SUM:
        return total
    if reduction == SUM_OVER_BATCH_SIZE or weights is None:
        return total / tf.cast(tf.size(unweighted), total.dtype)
    spread = tf.ones_like(unweighted) * tf.cast(weights, unweighted.dtype)  # (TF1's compute_weighted_loss)
    count = tf.reduce_sum(spread) if reduction == MEAN else tf.cast(tf.math.count_nonzero(spread), total.dtype)
    return tf.math.divide_no_nan(total, count)
