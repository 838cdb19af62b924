"""tf.contrib.metrics: the streaming metrics with predictions first, common.tf1.metrics' pairs in model_fn."""

import numpy as np
import pytest
import tensorflow as tf

import common
import common.tf1.layers
from common.contrib import metrics as contrib_metrics
from common.tf1 import train as tf1_train
from tests import models


def test_streaming_metrics_take_predictions_first_and_stream_over_an_evaluation(tmp_path):
    def model_fn(features, labels, mode):
        logits = common.tf1.layers.dense(features, 3, name="logits")
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        classes = tf.argmax(logits, 1)
        metrics = {"accuracy": contrib_metrics.streaming_accuracy(classes, labels),
                   "batch": contrib_metrics.streaming_mean(contrib_metrics.accuracy(classes, labels))}
        return common.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics, train_op=tf1_train.AdamOptimizer(
            0.05).minimize(loss, common.get_global_step()))

    features, labels = models.blobs(64)
    est = common.Estimator(model_fn, str(tmp_path))
    est.train(models.train_input(features, labels, 16), steps=20)
    results = est.evaluate(models.eval_input(features, labels, 16))
    assert results["accuracy"] == pytest.approx(results["batch"])  # equal batches: the mean of batch accuracies
    assert 0.5 < results["accuracy"] <= 1.0
    assert float(contrib_metrics.accuracy(tf.constant([1, 0, 1]), tf.constant([1, 1, 1]), weights=[1.0, 3.0, 0.0])) \
        == pytest.approx(0.25)


@pytest.mark.parametrize("towers", [1, 2])
def test_streaming_pearson_correlation_is_the_whole_evaluations_coefficient(tmp_path, towers):
    """ALBERT's and XLNet's STS-B metric, over batches (and towers) whose own coefficients differ."""
    x = np.linspace(0.0, 1.0, 32, dtype=np.float32).reshape(32, 1)
    y = (x[:, 0] ** 3 + 0.1 * np.sin(40 * x[:, 0])).astype(np.float32)

    def model_fn(features, labels, mode):
        predictions = common.tf1.layers.dense(features, 1, name="out")[:, 0]
        loss = tf.reduce_mean(tf.square(predictions - labels))
        metrics = {"pearson": contrib_metrics.streaming_pearson_correlation(features[:, 0], labels)}
        return common.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics, train_op=tf1_train.AdamOptimizer(
            0.05).minimize(loss, common.get_global_step()))

    est = common.Estimator(model_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(towers)))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8), steps=1)
    results = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8))
    assert results["pearson"] == pytest.approx(np.corrcoef(x[:, 0], y)[0, 1], rel=1e-5)
