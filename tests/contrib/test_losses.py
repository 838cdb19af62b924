"""tf.contrib.losses: contrib's argument order (predictions or logits first) and TF1's numbers."""

import numpy as np
import pytest
import tensorflow as tf

from common.contrib import losses as contrib_losses

PREDICTIONS = tf.constant([[0.2, 0.9], [0.6, 0.1]])
LABELS = tf.constant([[0.0, 1.0], [1.0, 0.0]])


def test_the_predictions_come_first_and_the_losses_are_means_over_the_weights():
    assert float(contrib_losses.mean_squared_error(PREDICTIONS, LABELS)) == pytest.approx(
        np.mean([0.04, 0.01, 0.16, 0.01]))
    assert float(contrib_losses.absolute_difference(PREDICTIONS, LABELS, weights=[[1.0], [0.0]])) == \
        pytest.approx(0.15)  # the first row's two errors over its two weights
    assert float(contrib_losses.log_loss(PREDICTIONS, LABELS)) == pytest.approx(float(
        tf.compat.v1.losses.log_loss(LABELS, PREDICTIONS)))
    logits = tf.constant([[2.0, -1.0], [0.5, 0.5]])
    assert float(contrib_losses.sparse_softmax_cross_entropy(logits, tf.constant([0, 1]))) == pytest.approx(
        np.mean([np.log(1 + np.exp(-3.0)), np.log(2.0)]), rel=1e-6)
    assert float(contrib_losses.softmax_cross_entropy(logits, LABELS[::-1])) == pytest.approx(float(
        contrib_losses.sparse_softmax_cross_entropy(logits, tf.constant([0, 1]))))
    hinge = contrib_losses.hinge_loss(tf.constant([[0.5], [-2.0]]), tf.constant([[1.0], [0.0]]))
    np.testing.assert_allclose(hinge.numpy(), [[0.5], [0.0]])  # each example's, as contrib's
