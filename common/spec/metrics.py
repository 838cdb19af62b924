"""Streaming eval metrics that add up exactly across towers and eval steps.

A metric here is a set of running totals (tensors summed over the towers of
a step and over the steps of an evaluation) and a function that turns the
final totals into the reported value. Accuracy is correct/count, a mean is
sum/weight, and so on. Totals are float64 so that long evaluations do not
lose counts. No metric owns variables, so model_fn can make them on every
call.

A Keras metric object (keras.metrics.*, tf.keras.metrics.*) updated in
model_fn and returned in eval_metric_ops, as TF 2.x estimator code did,
works too: its state variables are created once and shared by every tower
and call (common.served_variables), reset before each evaluation and read
after it.
"""

import dataclasses
from typing import Callable, Dict

import keras
import numpy as np
import tensorflow as tf


@dataclasses.dataclass
class Metric:
    """A metric as eval_metric_ops' values give it (this module's functions make them; a Keras metric object is
    the other form): per-step totals and what the summed totals report.

    Args:
      totals: name -> tensor computed in model_fn, summed over the towers and the eval batches (this module's
        are float64 scalars).
      result: result(totals) -> the reported value (a float), given the summed totals as name -> numpy value.
    """

    totals: Dict[str, tf.Tensor]
    result: Callable[[Dict[str, np.ndarray]], float]


def stateful(metric):
    """The Keras metric behind an eval_metric_ops value (a Keras metric, or a
    common.tf1.metrics (value, update_op) pair), or None for a totals Metric."""
    metric = getattr(metric, "metric", metric)
    return metric if isinstance(metric, keras.metrics.Metric) else None


def totals_of(metric):
    """The per-step totals a metric adds up ({} for a Keras metric, which keeps its own state)."""
    return {} if stateful(metric) is not None else metric.totals


def result_fn(metric):
    """totals -> the metric's value (a number, or a Keras metric's result as numpy)."""
    keras_metric = stateful(metric)
    if keras_metric is not None:
        return lambda totals: np.asarray(keras_metric.result())
    return metric.result


def check(name, metric):
    """ValueError unless `metric` is one this module can report."""
    if not isinstance(metric, Metric) and stateful(metric) is None:
        hint = (" (a (value, update_op) pair of tf.compat.v1.metrics: python -m common.upgrade turns them into "
                "common.tf1.metrics)" if isinstance(metric, tuple) else "")
        raise ValueError(
            f"eval_metric_ops[{name!r}] is a {type(metric).__name__}{hint}; give a common.metrics metric "
            "(accuracy, mean, ...) or a Keras metric object updated in model_fn")


def _weights_like(values, weights):
    values = tf.cast(values, tf.float64)
    if weights is None:
        return values, tf.ones_like(values)
    return values, tf.broadcast_to(tf.cast(weights, tf.float64), tf.shape(values))


def _ratio(numerator, denominator):
    return lambda totals: float(totals[numerator] / totals[denominator]) if totals[denominator] else 0.0


def mean(values, weights=None):
    """The (weighted) mean of `values` over every example seen: tf.compat.v1.metrics.mean's value.

    Args:
      values: a numeric tensor of any shape; each element counts (cast to float64).
      weights: None (each element weighs 1), or a tensor tf.broadcast_to can stretch to values' shape (a scalar,
        or values' shape with 1s: trailing axes align, so a [batch, k] tensor's example weights are [batch, 1]).

    Returns:
      A Metric: sum(values * weights) / sum(weights) over the evaluation, 0.0 where the weights sum to 0.
    """
    values, weights = _weights_like(values, weights)
    return Metric(
        {"sum": tf.reduce_sum(values * weights), "weight": tf.reduce_sum(weights)},
        _ratio("sum", "weight"),
    )


def accuracy(labels, predictions, weights=None):
    """Fraction of examples whose prediction equals the label: tf.compat.v1.metrics.accuracy's value.

    Args:
      labels: a tensor of labels (class ids), any shape; flattened.
      predictions: a tensor of the same number of elements, flattened and cast to labels' dtype (as TF1's:
        give class ids, not probabilities, which int labels truncate).
      weights: None, or a scalar or a tensor of one weight per element, flat ([n]); a [batch, 1] tensor,
        which TF1's took, fails (see mean).

    Returns:
      A Metric: the (weighted) fraction of elements where they are equal; 0.0 with no weight.
    """
    labels = tf.reshape(labels, [-1])
    predictions = tf.cast(tf.reshape(predictions, [-1]), labels.dtype)
    return mean(tf.equal(labels, predictions), weights)


def _positive_ratio(labels, predictions, weights, among):
    """Weighted fraction of examples that are true positives, among the predicted or the actual positives."""
    labels = tf.cast(tf.reshape(labels, [-1]), tf.bool)
    predictions = tf.cast(tf.reshape(predictions, [-1]), tf.bool)
    hits, weights = _weights_like(tf.logical_and(labels, predictions), weights)
    counted = tf.cast(predictions if among == "predicted" else labels, tf.float64) * weights
    return Metric({"hits": tf.reduce_sum(hits * weights), "counted": tf.reduce_sum(counted)},
                  _ratio("hits", "counted"))


def precision(labels, predictions, weights=None):
    """Of the examples predicted positive (nonzero), the fraction whose label is positive:
    tf.compat.v1.metrics.precision's value.

    Args:
      labels: a tensor, any shape, flattened; nonzero is positive.
      predictions: a tensor of the same number of elements, flattened; nonzero is positive (so threshold
        probabilities first: 0.2 is positive).
      weights: None, or a scalar or a flat [n] tensor of one weight per element (see accuracy).

    Returns:
      A Metric: weighted true positives / weighted predicted positives; 0.0 where none is predicted positive.
    """
    return _positive_ratio(labels, predictions, weights, "predicted")


def recall(labels, predictions, weights=None):
    """Of the examples labelled positive (nonzero), the fraction predicted positive:
    tf.compat.v1.metrics.recall's value.

    Args:
      labels: a tensor, any shape, flattened; nonzero is positive.
      predictions: a tensor of the same number of elements, flattened; nonzero is positive (threshold
        probabilities first).
      weights: None, or a scalar or a flat [n] tensor of one weight per element (see accuracy).

    Returns:
      A Metric: weighted true positives / weighted labelled positives; 0.0 where no label is positive.
    """
    return _positive_ratio(labels, predictions, weights, "labelled")


def binary_log_loss(labels, probabilities, epsilon=1e-7):
    """Mean binary cross-entropy of P(label = 1), as Kaggle scores it.

    Args:
      labels: 0/1 labels, any shape; flattened.
      probabilities: P(label = 1), the same number of elements; flattened and clipped to [epsilon, 1 - epsilon].
      epsilon: the clipping bound, so that a probability of 0 or 1 costs a finite loss.

    Returns:
      A Metric: the mean of -(y log p + (1 - y) log(1 - p)) over every example, unweighted.
    """
    labels = tf.cast(tf.reshape(labels, [-1]), tf.float64)
    p = tf.clip_by_value(tf.cast(tf.reshape(probabilities, [-1]), tf.float64), epsilon, 1 - epsilon)
    return mean(-(labels * tf.math.log(p) + (1 - labels) * tf.math.log(1 - p)))

