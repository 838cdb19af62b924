"""The heads' AUC: Keras's careful interpolation (tf.estimator 2.15) or TF1's trapezoids (tf.compat.v1.estimator);
the TF1 numbers are tf.compat.v1.metrics.auc's in TF 2.15 on the same data."""

import numpy as np
import pytest
import tensorflow as tf

from common.canned import head_metrics

LABELS = tf.constant([[1.0], [0.0], [1.0], [1.0], [0.0]])
SCORES = tf.constant([[0.9], [0.4], [0.3], [0.65], [0.7]])
WEIGHTS = tf.constant([[1.0], [2.0], [0.5], [1.0], [1.0]])


def tf1_auc(labels, weights, curve):
    return float(head_metrics.auc(labels, SCORES, weights, curve, head_metrics.TRAPEZOIDAL).result())


def test_tf1s_auc_is_tf_compat_v1_metrics_auc():
    assert tf1_auc(LABELS, WEIGHTS, "PR") == pytest.approx(0.718787670135498, rel=1e-6)
    assert tf1_auc(LABELS, WEIGHTS, "ROC") == pytest.approx(0.6666666269302368, rel=1e-6)
    assert tf1_auc(LABELS, WEIGHTS * 1e-3, "PR") == pytest.approx(0.7185946106910706, rel=1e-6)  # TF1's epsilon
    assert tf1_auc(tf.zeros_like(LABELS), None, "ROC") == pytest.approx(0.9999998211860657, rel=1e-6)


def test_keras_interpolation_is_kept_for_tf2_heads():
    interpolated = head_metrics.auc(LABELS, SCORES, WEIGHTS, "PR")
    assert abs(float(interpolated.result()) - 0.718787670135498) > 1e-3  # the two sums part on this data
    assert float(head_metrics.auc(tf.zeros_like(LABELS), SCORES, None, "ROC").result()) == 0.0
    with pytest.raises(ValueError, match="summation='trapezoid': 'interpolation'"):
        head_metrics.auc(LABELS, SCORES, None, "PR", "trapezoid")


def test_tf1s_auc_round_trips_its_config():
    metric = head_metrics.TF1AUC(curve="PR", name="auc_precision_recall")
    again = head_metrics.TF1AUC.from_config(metric.get_config())
    again.update_state(LABELS, SCORES, sample_weight=WEIGHTS)
    assert float(again.result()) == pytest.approx(0.718787670135498, rel=1e-6)


def test_thresholds_must_lie_between_0_and_1():
    assert head_metrics.checked_thresholds([0.3, 0.7]) == (0.3, 0.7)
    with pytest.raises(ValueError, match=r"thresholds must be in \(0, 1\), got 1.0"):
        head_metrics.checked_thresholds([np.float32(1.0)])
