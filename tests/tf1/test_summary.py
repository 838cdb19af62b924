"""Scalar summaries written in model_fn: spec scalars, logged by name and written to the events."""

import keras
import pytest
import tensorflow as tf

import common
import common.hooks
from common.state import summaries
from common.tf1 import layers, metrics, summary
from common.tf1 import train as tf1_train
from tests import models


def test_scalar_summaries_in_model_fn_are_logged_and_written(tmp_path):
    def summary_fn(features, labels, mode):
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        summary.scalar("mean_logit", tf.reduce_mean(logits))
        summary.scalar("loss_again", data=loss)  # TF2's spelling
        classes = tf.argmax(logits, axis=1)
        summary.scalar("train_accuracy", metrics.accuracy(labels, classes)[1])  # the update op: this batch's
        summary.scalar("batch_accuracy", tf.reduce_mean(tf.cast(tf.equal(classes, labels), tf.float32)))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(64)
    est = common.Estimator(summary_fn, str(tmp_path), config=common.RunConfig(
        save_summary_steps=2, device_plan=models.plan(2)))
    logged = []

    class Recorder(common.hooks.Hook):
        def before_step(self, step):
            return ("loss", "loss_again", "mean_logit", "train_accuracy", "batch_accuracy")

        def after_step(self, step, values, context):
            logged.append(values)

    est.train(models.train_input(features, labels, 16), steps=4, hooks=[Recorder()])
    assert [v["loss_again"] for v in logged] == pytest.approx([v["loss"] for v in logged])
    assert [v["train_accuracy"] for v in logged] == pytest.approx([v["batch_accuracy"] for v in logged])
    assert len({float(v["batch_accuracy"]) for v in logged}) > 1
    written = summaries.read_scalars(str(tmp_path))
    assert {"mean_logit", "loss_again"} <= set(written) and [s for s, _ in written["mean_logit"]] == [1, 3]
    with pytest.raises(NotImplementedError, match=r"summary.histogram\('w'\) inside model_fn is not supported"):
        summary.histogram("w", tf.zeros([2]))
