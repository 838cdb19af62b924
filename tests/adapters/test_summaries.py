"""TF 2's tf.summary.* inside model_fn, recorded as the spec's scalars and TF1's summary ops."""

import keras
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

import common
import common.hooks
from common.adapters import summaries as summary_adapter
from common.state import summaries
from common.tf1 import layers, summary
from common.tf1 import train as tf1_train
from tests import models


def test_tf2s_own_summaries_in_model_fn_are_written_not_dropped(tmp_path):
    """TF 2's tf.summary.scalar / histogram / image called in model_fn as a hand-ported program left them: with
    no writer they wrote nothing under tf.estimator 2.15, silently. Here they are written every
    save_summary_steps, the scalar averaged over the towers under its own tag."""
    def tf2_fn(features, labels, mode):
        logits = layers.dense(features, 3, name="logits")
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        tf.summary.scalar("mean_logit", tf.reduce_mean(logits))  # no step: TF 2 needed a default one
        tf.summary.histogram("activations", logits, step=tf.compat.v1.train.get_global_step())
        tf.summary.image("inputs", tf.reshape(features[:, :4], [-1, 2, 2, 1]), step=0, max_outputs=1)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(64)
    est = common.Estimator(tf2_fn, str(tmp_path / "model"), config=common.RunConfig(
        save_summary_steps=2, device_plan=models.plan(2)))
    logged = []

    class Recorder(common.hooks.Hook):
        def before_step(self, step):
            return ("mean_logit",)

        def after_step(self, step, values, context):
            logged.append(float(values["mean_logit"]))

    est.train(models.train_input(features, labels, 16), steps=4, hooks=[Recorder()])
    written = summaries.read_scalars(str(tmp_path / "model"))
    assert [step for step, _ in written["mean_logit"]] == [1, 3]
    assert [value for _, value in written["mean_logit"]] == pytest.approx([logged[0], logged[2]])
    tags = {(v.tag, event_pb2.Event.FromString(r.numpy()).step)
            for path in tf.io.gfile.glob(f"{tmp_path}/model/events.out.tfevents.*")
            for r in tf.data.TFRecordDataset(path) for v in event_pb2.Event.FromString(r.numpy()).summary.value}
    assert {("activations", 1), ("activations", 3), ("inputs", 1), ("inputs", 3)} <= tags
    assert tf.summary.write is summary_adapter._TF2_WRITE  # (put back after model_fn)


def test_a_training_calls_scalar_must_be_one_number(tmp_path):
    def model_fn(features, labels, mode):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
        loss = tf.reduce_mean(tf.square(features * scale - labels))
        summary.scalar("per_example", features[:, 0] * scale)  # (a vector, where a scalar takes one number)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    with pytest.raises(ValueError, match=r"summary.scalar\('per_example'\) got a tensor of shape \(2,\)"):
        common.Estimator(model_fn, str(tmp_path)).train(
            lambda: tf.data.Dataset.from_tensors((tf.ones([2, 1]), tf.ones([2, 1]))).repeat(), steps=1)
    assert tf.summary.write is summary_adapter._TF2_WRITE


def test_outside_model_fn_tf_summary_is_tensorflows_own(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert tf.summary.scalar("plain", 1.0, step=3)
    writer.flush()
    assert summaries.read_scalars(str(tmp_path))["plain"] == [(3, 1.0)]
