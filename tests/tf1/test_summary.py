"""Scalar summaries written in model_fn: spec scalars, logged by name and written to the events."""

import keras
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

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


def test_a_metric_pair_summarized_in_evaluation_is_dropped_as_tf1_never_ran_it_and_refused_in_training(tmp_path):
    def metric_summary_fn(features, labels, mode):  # jackd/mnist_estimator's: summary.scalar of (value, update_op)
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        if mode == common.ModeKeys.TRAIN:
            return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(
                loss, common.get_global_step()))
        accuracy = metrics.accuracy(labels, tf.argmax(logits, axis=1))
        summary.scalar("accuracy", accuracy)
        return common.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})

    features, labels = models.blobs(64)
    est = common.Estimator(metric_summary_fn, str(tmp_path))
    est.train(models.train_input(features, labels, 16), steps=2)
    assert 0 <= est.evaluate(models.eval_input(features, labels, 16))["accuracy"] <= 1

    def non_scalar_in_training(features, labels, mode):
        spec = metric_summary_fn(features, labels, common.ModeKeys.TRAIN)
        summary.scalar("logits", layers.dense(features, 2, name="more"))
        return spec

    with pytest.raises(ValueError, match=r"summary.scalar\('logits'\) got a tensor of shape \(16, 2\); a scalar"):
        common.Estimator(non_scalar_in_training, str(tmp_path / "other")).train(
            models.train_input(features, labels, 16), steps=1)


def test_image_histogram_and_text_summaries_in_model_fn_are_written_as_tf1_wrote_them(tmp_path):
    """TF1's summary ops (tf.compat.v1.summary.image & co., which the upgrade leaves as they are): the
    SummarySaverHook writes tower 0's protos at its steps, as TF1's wrote the merged summary."""
    def images_fn(features, labels, mode):
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        tf.compat.v1.summary.image("inputs", tf.reshape(features[:, :4], [-1, 2, 2, 1]), max_outputs=2)
        summary.histogram("logits", logits)
        tf.compat.v1.summary.text("note", tf.constant("hello"))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(64)
    est = common.Estimator(images_fn, str(tmp_path), config=common.RunConfig(
        save_summary_steps=2, device_plan=models.plan(2)))
    est.train(models.train_input(features, labels, 16), steps=4)
    found = {}
    for path in tf.io.gfile.glob(f"{tmp_path}/events.out.tfevents.*"):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                found.setdefault(value.tag, []).append((event.step, value))
    assert [step for step, _ in found["inputs/image/0"]] == [1, 3] and "inputs/image/2" not in found
    image = found["inputs/image/0"][0][1].image
    assert (image.height, image.width, image.colorspace) == (2, 2, 1) and image.encoded_image_string[:4] == b"\x89PNG"
    histogram = found["logits_1"][0][1].histo  # TF1's tag too: the layer's "logits" scope came first
    assert histogram.num == 8 * 3  # tower 0's shard of 8 examples, 3 logits each
    assert [step for step, _ in found["note"]] == [1, 3]


def test_merge_all_in_a_tf1_summary_saver_hook_is_written_to_its_output_dir(tmp_path):
    """TF1's SummarySaverHook(summary_op=tf.summary.merge_all(), output_dir=...) among the training hooks."""
    def merged_fn(features, labels, mode):
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        tf.compat.v1.summary.histogram("activations", logits)
        hook = common.hooks.SummarySaverHook(save_steps=1, output_dir=str(tmp_path / "merged"),
                                             summary_op=tf.compat.v1.summary.merge_all())
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss),
                                    training_hooks=[hook])

    features, labels = models.blobs(64)
    est = common.Estimator(merged_fn, str(tmp_path / "model"), config=common.RunConfig(save_summary_steps=100))
    est.train(models.train_input(features, labels, 16), steps=3)
    steps = [event_pb2.Event.FromString(r.numpy()).step
             for path in tf.io.gfile.glob(f"{tmp_path}/merged/events.out.tfevents.*")
             for r in tf.data.TFRecordDataset(path)
             if any(v.tag == "activations" for v in event_pb2.Event.FromString(r.numpy()).summary.value)]
    assert steps == [1, 2, 3]


def test_tf_summarys_spellings_in_model_fn_are_written_too(tmp_path):
    """tf.summary.image / histogram (name, data, step): what the upgrade writes for a TF2-era file's."""
    def v2_fn(features, labels, mode):
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        step = common.get_global_step()
        summary.image_v2("inputs", tf.reshape(features[:, :4], [-1, 2, 2, 1]), step, max_outputs=1)
        summary.histogram_v2("activations", logits, step=step, buckets=10)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(64)
    est = common.Estimator(v2_fn, str(tmp_path), config=common.RunConfig(save_summary_steps=2))
    est.train(models.train_input(features, labels, 16), steps=3)
    tags = {(v.tag, event_pb2.Event.FromString(r.numpy()).step)
            for path in tf.io.gfile.glob(f"{tmp_path}/events.out.tfevents.*") for r in tf.data.TFRecordDataset(path)
            for v in event_pb2.Event.FromString(r.numpy()).summary.value}
    assert {("inputs/image", 1), ("inputs/image", 3), ("activations", 1), ("activations", 3)} <= tags


