"""tf.contrib.metrics' streaming metrics (TensorFlow 1.0's, which tf.metrics replaced): predictions first.

contrib's `streaming_accuracy(predictions, labels, weights)` is
tf.compat.v1.metrics.accuracy(labels, predictions, weights) with its first
two arguments the other way round, and so for each streaming metric here:
common.tf1.metrics' (value, update_op) pairs. `accuracy(predictions,
labels)` was contrib's plain tensor, the batch's accuracy.
`streaming_pearson_correlation` (ALBERT's and XLNet's STS-B metric) keeps
the weighted sums the coefficient is made of, float64.
"""

import keras
import tensorflow as tf

from common.tf1 import metrics


def _swapped(metric):
    def streaming(predictions, labels, weights=None, metrics_collections=None, updates_collections=None, name=None,
                  **kwargs):
        return metric(labels, predictions, weights=weights, metrics_collections=metrics_collections,
                      updates_collections=updates_collections, name=name, **kwargs)
    streaming.__name__ = "streaming_" + metric.__name__
    streaming.__doc__ = f"contrib's streaming_{metric.__name__}: common.tf1.metrics', predictions first."
    return streaming


streaming_accuracy = _swapped(metrics.accuracy)
streaming_precision = _swapped(metrics.precision)
streaming_recall = _swapped(metrics.recall)
streaming_auc = _swapped(metrics.auc)
streaming_mean_squared_error = _swapped(metrics.mean_squared_error)
streaming_root_mean_squared_error = _swapped(metrics.root_mean_squared_error)
streaming_mean_absolute_error = _swapped(metrics.mean_absolute_error)
streaming_true_positives = _swapped(metrics.true_positives)
streaming_false_positives = _swapped(metrics.false_positives)
streaming_true_negatives = _swapped(metrics.true_negatives)
streaming_false_negatives = _swapped(metrics.false_negatives)
streaming_mean = metrics.mean


def accuracy(predictions, labels, weights=None, name=None):
    """The batch's accuracy as one tensor (contrib's metric_ops.accuracy)."""
    with tf.name_scope(name or "accuracy"):
        correct = tf.cast(tf.equal(predictions, tf.cast(labels, predictions.dtype)), tf.float32)
        if weights is None:
            return tf.reduce_mean(correct)
        weights = tf.broadcast_to(tf.cast(weights, tf.float32), tf.shape(correct))
        return tf.reduce_sum(correct * weights) / tf.reduce_sum(weights)


class _Pearson(keras.metrics.Metric):
    """The (weighted) Pearson correlation of predictions and labels over everything seen: its sums, float64."""

    _SUMS = ("n", "x", "y", "xx", "yy", "xy")

    def __init__(self, name):
        super().__init__(name=name)
        self.sums = {key: self.add_variable((), "zeros", dtype="float64", name=key) for key in self._SUMS}

    def add(self, predictions, labels, weights):
        x, y = (tf.reshape(tf.cast(v, tf.float64), [-1]) for v in (predictions, labels))
        w = tf.ones_like(x) if weights is None else tf.broadcast_to(
            tf.reshape(tf.cast(weights, tf.float64), [-1]), tf.shape(x))
        batch = {"n": w, "x": w * x, "y": w * y, "xx": w * x * x, "yy": w * y * y, "xy": w * x * y}
        for key, values in batch.items():
            self.sums[key].assign_add(tf.reduce_sum(values))
        return self.result()

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("updated through streaming_pearson_correlation")

    def result(self):
        s = self.sums
        covariance = s["n"] * s["xy"] - s["x"] * s["y"]
        spread = tf.sqrt((s["n"] * s["xx"] - s["x"] ** 2) * (s["n"] * s["yy"] - s["y"] ** 2))
        return tf.math.divide_no_nan(covariance, spread)


def streaming_pearson_correlation(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """contrib's streaming Pearson correlation of predictions and labels: a (value, update_op) pair."""
    del metrics_collections, updates_collections
    metric = _Pearson(name or "pearson_r")
    return metrics.ValueAndUpdate(metric, metric.add(predictions, labels, weights))
