"""The heads' AUC and threshold metrics, updated as tf.estimator's heads updated them.

tf.estimator 2.15's heads (common.canned.heads) used Keras's AUC, which sums
the precision-recall curve by careful interpolation; tf.compat.v1.estimator's
used tf.compat.v1.metrics.auc, which sums both curves by trapezoids and adds
an epsilon to the rates (ROC differs by that epsilon only).
"""

import keras
import tensorflow as tf

INTERPOLATION = "interpolation"
TRAPEZOIDAL = "trapezoidal"
_EPSILON = 1e-6  # (tf.compat.v1.metrics.auc's, in its recall, precision and false positive rate)


def checked_thresholds(thresholds):
    thresholds = tuple(thresholds or ())
    for threshold in thresholds:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"thresholds must be in (0, 1), got {threshold}")
    return thresholds


def threshold_metrics(thresholds, labels, probabilities, weights):
    """accuracy, precision and recall at each threshold, under tf.estimator's keys ("accuracy/positive_threshold_
    0.3"); probabilities [batch, n] against 0/1 labels [batch, n], weights [batch, 1] or None."""
    found = {}
    broadcast = None if weights is None else tf.broadcast_to(weights, tf.shape(probabilities))
    for threshold in thresholds:
        key = f"positive_threshold_{threshold:g}"
        accuracy = keras.metrics.BinaryAccuracy(threshold=threshold)  # (per example: its classes' mean)
        accuracy.update_state(labels, probabilities, sample_weight=None if weights is None else weights[:, 0])
        precision = keras.metrics.Precision(thresholds=threshold)
        precision.update_state(labels, probabilities, sample_weight=broadcast)
        recall = keras.metrics.Recall(thresholds=threshold)
        recall.update_state(labels, probabilities, sample_weight=broadcast)
        found.update({f"accuracy/{key}": accuracy, f"precision/{key}": precision, f"recall/{key}": recall})
    return found


def auc(labels, predictions, weights, curve, summation=INTERPOLATION):
    """The AUC of `curve` ("ROC" or "PR"): Keras's (INTERPOLATION), as tf.estimator 2.15's heads updated it,
    or TF1's (TRAPEZOIDAL); the weights [batch, 1] broadcast over predictions of several classes."""
    name = "auc" if curve == "ROC" else "auc_precision_recall"
    if summation == TRAPEZOIDAL:
        metric = TF1AUC(curve=curve, name=name)
    elif summation == INTERPOLATION:
        metric = keras.metrics.AUC(curve=curve, name=name)
    else:
        raise ValueError(f"summation={summation!r}: {INTERPOLATION!r} (Keras's) or {TRAPEZOIDAL!r} (TF1's)")
    if weights is not None:
        weights = tf.broadcast_to(weights, tf.shape(predictions))
    metric.update_state(labels, predictions, sample_weight=weights)
    return metric


class TF1AUC(keras.metrics.AUC):
    """tf.compat.v1.metrics.auc: Keras's thresholds and counts (TF1's: 200, 1e-7 past 0 and 1), the curve
    summed by trapezoids with TF1's 1e-6 in its rates (an eval set of one class scores near 1, not 0)."""

    def result(self):
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        recall = (tp + _EPSILON) / (tp + fn + _EPSILON)
        if self.curve.value == "ROC":
            x, y = fp / (fp + tn + _EPSILON), recall
        else:
            x, y = recall, (tp + _EPSILON) / (tp + fp + _EPSILON)
        return tf.reduce_sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2.0)
