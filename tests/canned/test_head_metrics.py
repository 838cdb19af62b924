"""The heads' AUC: Keras's careful interpolation (tf.estimator 2.15) or TF1's trapezoids (tf.compat.v1.estimator)."""

import numpy as np
import pytest
import tensorflow as tf

from common.canned import head_metrics

LABELS = np.array([[1.0], [0.0], [1.0], [1.0], [0.0]], np.float32)
SCORES = np.array([[0.9], [0.4], [0.3], [0.65], [0.7]], np.float32)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.0], [1.0]], np.float32)


def tf1_trapezoidal_pr_auc(labels, scores, weights):
    """tf.compat.v1.metrics.auc(curve="PR", summation_method="trapezoidal") written out in numpy."""
    thresholds = [-1e-7] + [(i + 1) / 199 for i in range(198)] + [1 + 1e-7]
    labels, scores, weights = labels.ravel(), scores.ravel(), weights.ravel()
    tp = np.array([np.sum(weights * (scores > t) * labels) for t in thresholds])
    fp = np.array([np.sum(weights * (scores > t) * (1 - labels)) for t in thresholds])
    fn = np.array([np.sum(weights * (scores <= t) * labels) for t in thresholds])
    recall, precision = (tp + 1e-7) / (tp + fn + 1e-7), (tp + 1e-7) / (tp + fp + 1e-7)
    return np.sum((recall[:-1] - recall[1:]) * (precision[:-1] + precision[1:]) / 2)


def test_trapezoidal_pr_auc_is_tf1s():
    metric = head_metrics.auc(tf.constant(LABELS), tf.constant(SCORES), tf.constant(WEIGHTS), "PR",
                              head_metrics.TRAPEZOIDAL)
    assert float(metric.result()) == pytest.approx(tf1_trapezoidal_pr_auc(LABELS, SCORES, WEIGHTS), rel=1e-5)


def test_interpolation_is_kept_for_tf2_heads_and_roc():
    interpolated = head_metrics.auc(tf.constant(LABELS), tf.constant(SCORES), tf.constant(WEIGHTS), "PR")
    trapezoids = tf1_trapezoidal_pr_auc(LABELS, SCORES, WEIGHTS)
    assert abs(float(interpolated.result()) - trapezoids) > 1e-3  # the two sums part on this data
    roc = head_metrics.auc(tf.constant(LABELS), tf.constant(SCORES), None, "ROC", head_metrics.TRAPEZOIDAL)
    assert float(roc.result()) == pytest.approx(3 / 6, rel=1e-5)  # 3 of the 6 positive-negative pairs ordered


def test_thresholds_must_lie_between_0_and_1():
    assert head_metrics.checked_thresholds([0.3, 0.7]) == (0.3, 0.7)
    with pytest.raises(ValueError, match=r"thresholds must be in \(0, 1\), got 1.0"):
        head_metrics.checked_thresholds([1.0])
