"""Metrics: totals per batch, results from summed totals equal the whole-data value."""

import numpy as np
import pytest
import tensorflow as tf

import common  # noqa: F401  (first: TensorFlow loads with the project's kernel settings)
from common.spec import metrics


def totals_of(metric):
    return {name: tensor.numpy() for name, tensor in metric.totals.items()}


def summed(metric_fn, batches):
    """The totals of every batch added up in numpy, as the Estimator does over towers and steps."""
    result, total = None, {}
    for args in batches:
        metric = metric_fn(*args)
        result = metric.result
        for name, value in totals_of(metric).items():
            total[name] = total.get(name, 0.0) + value
    return result(total)


def split(arrays, sizes):
    bounds = np.cumsum(sizes)[:-1]
    return list(zip(*(np.split(array, bounds) for array in arrays)))


def test_mean_totals_are_float64_sum_and_weight():
    metric = metrics.mean(tf.constant([1.0, 2.0, 6.0], tf.float32))
    assert set(metric.totals) == {"sum", "weight"}
    assert all(tensor.dtype == tf.float64 for tensor in metric.totals.values())
    assert totals_of(metric) == {"sum": 9.0, "weight": 3.0}
    assert metric.result(totals_of(metric)) == pytest.approx(3.0)
    assert isinstance(metric.result(totals_of(metric)), float)


def test_mean_weights_per_example_and_broadcast_scalar_weight():
    values = tf.constant([1.0, 2.0, 6.0])
    weighted = metrics.mean(values, weights=tf.constant([1.0, 0.0, 3.0]))
    assert totals_of(weighted) == {"sum": 19.0, "weight": 4.0}
    assert weighted.result(totals_of(weighted)) == pytest.approx(19.0 / 4.0)
    scalar = metrics.mean(values, weights=2.0)
    assert totals_of(scalar) == {"sum": 18.0, "weight": 6.0}
    assert scalar.result(totals_of(scalar)) == pytest.approx(3.0)


def test_mean_of_integer_values_is_not_truncated():
    metric = metrics.mean(tf.constant([1, 2], tf.int32))
    assert metric.result(totals_of(metric)) == pytest.approx(1.5)


def test_mean_over_uneven_batches_equals_whole_data_weighted_mean():
    rng = np.random.RandomState(0)
    values = rng.randn(37).astype(np.float32)
    weights = rng.uniform(0.0, 2.0, 37).astype(np.float32)
    batches = split((values, weights), [10, 3, 20, 4])
    result = summed(lambda v, w: metrics.mean(tf.constant(v), tf.constant(w)), batches)
    expected = np.sum(values.astype(np.float64) * weights) / np.sum(weights.astype(np.float64))
    assert result == pytest.approx(expected, rel=1e-12)
    # The mean of the batch means is not the answer: the batches differ in size and weight.
    batch_means = [np.average(v, weights=w) for v, w in batches]
    assert abs(np.mean(batch_means) - expected) > 1e-3


def test_zero_weight_gives_zero_not_nan():
    metric = metrics.mean(tf.constant([5.0, 7.0]), weights=tf.constant([0.0, 0.0]))
    assert totals_of(metric) == {"sum": 0.0, "weight": 0.0}
    assert metric.result(totals_of(metric)) == 0.0
    empty = metrics.accuracy(tf.zeros([0], tf.int64), tf.zeros([0], tf.int64))
    assert empty.result(totals_of(empty)) == 0.0


def test_accuracy_counts_correct_examples_of_any_shape_and_dtype():
    labels = tf.constant([[0], [1], [2], [2]], tf.int64)  # [n, 1] labels against [n] predictions
    predictions = tf.constant([0, 2, 2, 1], tf.int32)
    metric = metrics.accuracy(labels, predictions)
    assert totals_of(metric) == {"sum": 2.0, "weight": 4.0}
    assert metric.result(totals_of(metric)) == pytest.approx(0.5)


def test_accuracy_weights_count_examples():
    metric = metrics.accuracy(
        tf.constant([1, 1, 0, 0]), tf.constant([1, 0, 0, 1]), weights=tf.constant([3.0, 1.0, 0.0, 1.0]))
    assert totals_of(metric) == {"sum": 3.0, "weight": 5.0}
    assert metric.result(totals_of(metric)) == pytest.approx(0.6)


def test_accuracy_over_batches_equals_whole_data_accuracy():
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 4, 50).astype(np.int64)
    predictions = np.where(rng.rand(50) < 0.7, labels, rng.randint(0, 4, 50)).astype(np.int64)
    batches = split((labels, predictions), [16, 16, 16, 2])
    result = summed(lambda y, p: metrics.accuracy(tf.constant(y), tf.constant(p)), batches)
    assert result == pytest.approx(np.mean(labels == predictions), rel=1e-12)


def numpy_log_loss(labels, probabilities, epsilon=1e-7):
    p = np.clip(probabilities.astype(np.float64), epsilon, 1 - epsilon)
    return float(np.mean(-(labels * np.log(p) + (1 - labels) * np.log(1 - p))))


def test_binary_log_loss_known_values_and_clipping():
    metric = metrics.binary_log_loss(tf.constant([1, 0]), tf.constant([0.8, 0.4]))
    assert metric.result(totals_of(metric)) == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2, rel=1e-6)
    # A confident wrong answer costs -log(epsilon), not infinity.
    wrong = metrics.binary_log_loss(tf.constant([1.0, 0.0]), tf.constant([0.0, 1.0]))
    assert np.isfinite(wrong.result(totals_of(wrong)))
    assert wrong.result(totals_of(wrong)) == pytest.approx(-np.log(1e-7), rel=1e-6)
    looser = metrics.binary_log_loss(tf.constant([1.0]), tf.constant([0.0]), epsilon=1e-3)
    assert looser.result(totals_of(looser)) == pytest.approx(-np.log(1e-3), rel=1e-6)


def test_binary_log_loss_over_batches_equals_whole_data_value():
    rng = np.random.RandomState(2)
    labels = rng.randint(0, 2, 41).astype(np.int64)
    probabilities = rng.rand(41).astype(np.float32)
    probabilities[:3] = [0.0, 1.0, 1.0]  # clipped ends are part of the whole-data value too
    batches = split((labels, probabilities.reshape(-1, 1)), [8, 8, 8, 8, 9])
    result = summed(lambda y, p: metrics.binary_log_loss(tf.constant(y), tf.constant(p)), batches)
    assert result == pytest.approx(numpy_log_loss(labels, probabilities), rel=1e-6)
