"""(value, update_op) pairs a program made itself, reported as streaming metrics over the whole evaluation."""

import numpy as np
import pytest
import tensorflow as tf

import common
import common.hooks
from common.tf1 import metrics
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(7)


def _matthews_fn(features, labels, mode):
    """ALBERT's CoLA metric_fn: a Matthews correlation from the four counts, which are not reported themselves."""
    scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
    predictions = tf.cast(features * scale > 0.5, tf.int32)
    loss = tf.square(scale - 1.0)
    tp, tp_op = metrics.true_positives(predictions, labels)
    tn, tn_op = metrics.true_negatives(predictions, labels)
    fp, fp_op = metrics.false_positives(predictions, labels)
    fn, fn_op = metrics.false_negatives(predictions, labels)
    mcc = tf.math.divide_no_nan(tp * tn - fp * fn, tf.pow((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn), 0.5))
    return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss),
                                eval_metric_ops={"matthew_corr": (mcc, tf.group(tp_op, tn_op, fp_op, fn_op))})


def test_a_value_derived_from_unreported_pairs_is_the_whole_evaluations_and_each_evaluation_starts_anew(tmp_path):
    est = common.Estimator(_matthews_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    labels = np.array([1, 0, 1, 1, 0, 1, 0, 0] * 3, np.int32)

    def input_fn(scores):
        return lambda: tf.data.Dataset.from_tensor_slices((scores.astype(np.float32), labels)).batch(8)

    est.train(lambda: input_fn(labels.astype(np.float32))().repeat(), steps=1)
    assert est.evaluate(input_fn(labels.astype(np.float32)))["matthew_corr"] == pytest.approx(1.0)
    scores = RNG.rand(len(labels))
    predicted = scores > 0.5
    tp, tn = np.sum(predicted & (labels == 1)), np.sum(~predicted & (labels == 0))
    fp, fn = np.sum(predicted & (labels == 0)), np.sum(~predicted & (labels == 1))
    expected = (tp * tn - fp * fn) / np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    assert est.evaluate(input_fn(scores))["matthew_corr"] == pytest.approx(expected, rel=1e-6)


def test_a_derived_value_of_several_numbers_is_reported_as_an_array_and_text_is_refused_by_name(tmp_path):
    def fn(features, labels, mode, params):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
        loss = tf.square(scale - 1.0)
        (total, total_op), text = metrics.mean(features), tf.strings.as_string(features[0])
        ops = {"pair": (tf.stack([total, 2.0 * total]), total_op)}
        if params["text"]:
            ops["text"] = (text, tf.no_op())
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss),
                                    eval_metric_ops=ops)

    est = common.Estimator(fn, str(tmp_path), params={"text": False})
    values = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
    est.train(lambda: tf.data.Dataset.from_tensors((values, values)).repeat(), steps=1)
    results = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((values, values)).batch(2))
    np.testing.assert_allclose(results["pair"], [3.0, 6.0])
    assert results["pair"].dtype == np.float32
    with pytest.raises(ValueError, match=r"eval_metric_ops\['text'\] is a \(value, update_op\) pair whose value is a "
                                         "string tensor"):
        common.Estimator(fn, str(tmp_path), params={"text": True}).evaluate(
            lambda: tf.data.Dataset.from_tensor_slices((values, values)).batch(2))
