"""A head's loss reductions, TF 2's and TF1's, as TF1's compute_weighted_loss reduced."""

import numpy as np
import pytest
import tensorflow as tf

from common.canned import reductions

LOSSES = tf.constant([[1.0], [2.0], [3.0], [6.0]])
WEIGHTS = tf.constant([[1.0], [0.0], [2.0], [1.0]])


@pytest.mark.parametrize("spelling, expected", [
    ("weighted_sum", 1 + 6 + 6), ("sum_over_batch_size", 13 / 4), (tf.compat.v1.losses.Reduction.MEAN, 13 / 4),
    (tf.compat.v1.losses.Reduction.SUM_BY_NONZERO_WEIGHTS, 13 / 3)])
def test_each_reduction_divides_the_weighted_sum_as_tf1_did(spelling, expected):
    reduction = reductions.loss_reduction_of(spelling)
    assert float(reductions.reduced(LOSSES, WEIGHTS, reduction)) == pytest.approx(expected)
    assert float(reductions.reduced(LOSSES, None, reduction)) == pytest.approx(12 if expected == 13 else 3.0)


def test_no_weight_at_all_is_a_zero_loss_and_none_is_refused_by_name():
    zero = tf.zeros_like(WEIGHTS)
    assert float(reductions.reduced(LOSSES, zero, reductions.MEAN)) == 0.0  # (TF1's safe mean)
    np.testing.assert_equal(reductions.loss_reduction_of(None), reductions.SUM_OVER_BATCH_SIZE)
    with pytest.raises(ValueError, match="loss_reduction='none': a head reduces its loss by 'sum_over_batch_size'"):
        reductions.loss_reduction_of(tf.compat.v1.losses.Reduction.NONE)
