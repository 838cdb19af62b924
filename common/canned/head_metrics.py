"""The heads' AUC and threshold metrics, updated as tf.estimator's heads updated them.

tf.estimator 2.15's heads (common.canned.heads) used Keras's AUC, which sums
the precision-recall curve by careful interpolation; tf.compat.v1.estimator's
used tf.compat.v1.metrics.auc, which sums it by trapezoids. ROC is the same
both ways.
"""

import keras
import tensorflow as tf

INTERPOLATION = "interpolation"
TRAPEZOIDAL = "trapezoidal"
_EPSILON = 1e-7  # (TF1's, added to both sides of precision and recall)


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
    """Keras's AUC (200 thresholds; PR by careful interpolation), as tf.estimator 2.15's heads updated it, or
    for PR with summation TRAPEZOIDAL, TF1's; the weights [batch, 1] broadcast over predictions of several
    classes."""
    if summation == TRAPEZOIDAL and curve == "PR":
        metric = TrapezoidalPrAUC(name="auc_precision_recall")
    else:
        metric = keras.metrics.AUC(curve=curve, name="auc" if curve == "ROC" else "auc_precision_recall")
    if weights is not None:
        weights = tf.broadcast_to(weights, tf.shape(predictions))
    metric.update_state(labels, predictions, sample_weight=weights)
    return metric


class TrapezoidalPrAUC(keras.metrics.AUC):
    """tf.compat.v1.metrics.auc(curve="PR"): Keras's thresholds and counts (TF1's: 200, 1e-7 past 0 and 1),
    the precision-recall curve summed by trapezoids."""

    def __init__(self, name="auc_precision_recall"):
        super().__init__(curve="PR", name=name)

    def result(self):
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        recall = (tp + _EPSILON) / (tp + fn + _EPSILON)
        precision = (tp + _EPSILON) / (tp + fp + _EPSILON)
        return tf.reduce_sum((recall[:-1] - recall[1:]) * (precision[:-1] + precision[1:]) / 2.0)
