"""tf.compat.v1.metrics inside model_fn: (value, update_op) pairs that stream over towers and batches.

A TF1 program returned `eval_metric_ops={"accuracy": tf.metrics.accuracy(labels,
predictions)}`: a pair of the running value and the op that updates it. Here
each pair is backed by a Keras metric (its state created once and shared by
every tower, reset before each evaluation; see common.served_variables), with
TF1's arithmetic: a trailing dimension of 1 squeezed from labels or predictions
where the other lacks it, weights broadcast to the values, labels and predictions of
precision, recall and the counts (true_positives & co.) cast to bool, AUC by the trapezoidal rule over 200
thresholds.

The update_op of a ratio metric (accuracy, mean, precision, recall, the
errors) is a tensor, as in TF1, so `tf.summary.scalar("accuracy",
accuracy[1])` in training works; its value is the batch's (averaged over
towers as the spec's scalars are), where TF1's was the running value since
the train() call began. AUC's update_op is an op.
"""

import keras
import tensorflow as tf

from common.adapters.metric_pairs import ValueAndUpdate


class WeightedRatio(keras.metrics.Metric):
    """sum(weights * numerator) / sum(weights * denominator) over everything seen, in float64."""

    def __init__(self, name, transform=None, divide=tf.math.divide_no_nan):
        super().__init__(name=name)
        self.numerator = self.add_variable((), "zeros", dtype="float64", name="numerator")
        self.denominator = self.add_variable((), "zeros", dtype="float64", name="denominator")
        self._transform = transform
        self._divide = divide  # (0 / 0: 0 for TF1's ratio metrics, NaN for its metrics at k)

    def add(self, numerator, denominator):
        """Adds a batch; returns the batch's own value (see the module's docstring)."""
        numerator = tf.reduce_sum(tf.cast(numerator, tf.float64))
        denominator = tf.reduce_sum(tf.cast(denominator, tf.float64))
        self.numerator.assign_add(numerator)
        self.denominator.assign_add(denominator)
        return self._value(numerator, denominator)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("updated through common.tf1.metrics functions")

    def result(self):
        return self._value(self.numerator, self.denominator)

    def _value(self, numerator, denominator):
        value = self._divide(numerator, denominator)
        return self._transform(value) if self._transform else value


class _WeightedSum(keras.metrics.Metric):
    """sum(weights * values) over everything seen, in float64 (TF1's true_positives and the other counts)."""

    def __init__(self, name):
        super().__init__(name=name)
        self.total = self.add_variable((), "zeros", dtype="float64", name="total")

    def add(self, values):
        """Adds a batch; returns the batch's own sum (see the module's docstring)."""
        batch = tf.reduce_sum(values)
        self.total.assign_add(batch)
        return batch

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("updated through common.tf1.metrics functions")

    def result(self):
        return tf.identity(self.total)


def _squeezed(labels, predictions):
    """TF1's metrics first dropped a trailing dimension of 1 (or unknown) from whichever of labels and
    predictions had one dimension more: a regression head's [batch, 1] against [batch] labels."""
    labels, predictions = tf.convert_to_tensor(labels), tf.convert_to_tensor(predictions)
    labels_rank, predictions_rank = labels.shape.rank, predictions.shape.rank
    if labels_rank is None or predictions_rank is None:
        return labels, predictions
    if predictions_rank == labels_rank + 1 and predictions.shape[-1] in (1, None):
        predictions = tf.squeeze(predictions, [-1])
    elif labels_rank == predictions_rank + 1 and labels.shape[-1] in (1, None):
        labels = tf.squeeze(labels, [-1])
    return labels, predictions


def weights_like(weights, values):
    """float64 weights of `values`' shape: ones for None, else lined up with the values as TF1 lined them up."""
    if weights is None:
        return tf.ones_like(values, tf.float64)
    weights = tf.convert_to_tensor(weights)
    if weights.shape.rank and values.shape.rank is not None:  # as TF1 lined them up with the predictions
        if weights.shape.rank == values.shape.rank + 1:
            weights = tf.squeeze(weights, [-1])
        elif weights.shape.rank + 1 == values.shape.rank:
            weights = tf.expand_dims(weights, -1)
    return tf.broadcast_to(tf.cast(weights, tf.float64), tf.shape(values))


def _ratio(name, default, numerator, denominator, transform=None):
    metric = WeightedRatio(name or default, transform)
    return ValueAndUpdate(metric, metric.add(numerator, denominator))


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    values = tf.cast(values, tf.float64)
    w = weights_like(weights, values)
    return _ratio(name, "mean", values * w, w)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    labels, predictions = _squeezed(labels, predictions)
    predictions = tf.cast(tf.reshape(predictions, tf.shape(labels)), labels.dtype) \
        if predictions.dtype != labels.dtype else predictions
    correct = tf.cast(tf.equal(predictions, labels), tf.float64)
    w = weights_like(weights, correct)
    return _ratio(name, "accuracy", correct * w, w)


def _true_and_predicted(labels, predictions):
    labels, predictions = _squeezed(labels, predictions)
    return tf.cast(labels, tf.bool), tf.cast(predictions, tf.bool)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    truth, predicted = _true_and_predicted(labels, predictions)
    w = weights_like(weights, tf.cast(predicted, tf.float64))
    return _ratio(name, "precision", tf.cast(truth & predicted, tf.float64) * w, tf.cast(predicted, tf.float64) * w)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    truth, predicted = _true_and_predicted(labels, predictions)
    w = weights_like(weights, tf.cast(truth, tf.float64))
    return _ratio(name, "recall", tf.cast(truth & predicted, tf.float64) * w, tf.cast(truth, tf.float64) * w)


def _counting(default_name, truth_wanted, prediction_wanted):
    """TF1's count metric of the examples whose bool label is truth_wanted and bool prediction
    prediction_wanted, weighted."""
    def count(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        truth, predicted = _true_and_predicted(labels, predictions)
        hits = tf.cast(tf.equal(truth, truth_wanted) & tf.equal(predicted, prediction_wanted), tf.float64)
        metric = _WeightedSum(name or default_name)
        return ValueAndUpdate(metric, metric.add(hits * weights_like(weights, hits)))
    count.__name__ = count.__qualname__ = default_name
    return count


true_positives = _counting("true_positives", True, True)
false_positives = _counting("false_positives", False, True)
true_negatives = _counting("true_negatives", False, False)
false_negatives = _counting("false_negatives", True, False)


def _squared_or_absolute(labels, predictions, square):
    labels, predictions = _squeezed(labels, predictions)
    difference = tf.cast(predictions, tf.float64) - tf.cast(labels, tf.float64)
    return tf.square(difference) if square else tf.abs(difference)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    errors = _squared_or_absolute(labels, predictions, square=True)
    w = weights_like(weights, errors)
    return _ratio(name, "mean_squared_error", errors * w, w)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    errors = _squared_or_absolute(labels, predictions, square=True)
    w = weights_like(weights, errors)
    return _ratio(name, "root_mean_squared_error", errors * w, w, transform=tf.sqrt)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    errors = _squared_or_absolute(labels, predictions, square=False)
    w = weights_like(weights, errors)
    return _ratio(name, "mean_absolute_error", errors * w, w)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """Keras's AUC is TF1's: the same thresholds, and its "interpolation" sum
    is TF1's trapezoidal rule for ROC (for PR, TF1's "careful_interpolation")."""
    methods = {"trapezoidal": "interpolation", "careful_interpolation": "interpolation",
               "minoring": "minoring", "majoring": "majoring"}
    if summation_method not in methods:
        raise ValueError(f"auc: summation_method={summation_method!r} is not one of {', '.join(methods)}")
    metric = keras.metrics.AUC(num_thresholds=num_thresholds, curve=curve, thresholds=thresholds,
                               summation_method=methods[summation_method], name=name or "auc")
    labels, predictions = _squeezed(labels, predictions)
    if labels.shape.rank is None or predictions.shape.rank is None:  # (TF1's auc flattened both; Keras's needs ranks)
        if weights is not None:
            raise ValueError(f"auc {name or ''}: labels or predictions of unknown rank with weights: give them a "
                             "known rank (tf.reshape, or squeeze with an axis) so the weights can be lined up")
        labels, predictions = tf.reshape(labels, [-1]), tf.reshape(predictions, [-1])
    metric.update_state(tf.cast(labels, tf.bool), predictions, sample_weight=weights)
    return ValueAndUpdate(metric, tf.no_op())
