"""TF1 layers and metrics inside model_fn (common.tf1), on towers: shared once, TF1's arithmetic."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
import common.hooks
from common import checkpoints, summaries
from common.tf1 import layers, metrics, summary
from common.tf1 import losses as tf1_losses
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(7)
IMAGES = RNG.rand(96, 6, 6, 1).astype(np.float32)
LABELS = RNG.randint(0, 2, 96).astype(np.int64)
IMAGES[LABELS == 1, 1:4, 1:4, 0] += 0.8


def tf1_fn(features, labels, mode):
    training = mode == common.ModeKeys.TRAIN
    net = layers.conv2d(features, 4, 3, activation=tf.nn.relu)
    net = layers.batch_normalization(net, momentum=0.5, training=training)
    net = layers.max_pooling2d(net, 2, 2)
    net = layers.dropout(layers.flatten(net), rate=0.25, training=training)
    logits = layers.dense(net, 2, name="logits")
    probabilities = tf.nn.softmax(logits)
    classes = tf.argmax(logits, axis=1)
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"classes": classes, "probabilities": probabilities})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    positive = tf.equal(labels, 1)
    eval_metric_ops = {
        "accuracy": metrics.accuracy(labels, classes),
        "precision": metrics.precision(positive, tf.equal(classes, 1)),
        "recall": metrics.recall(positive, tf.equal(classes, 1)),
        "auc": metrics.auc(positive, probabilities[:, 1]),
        "mse": metrics.mean_squared_error(tf.one_hot(labels, 2), probabilities),
        "rmse": metrics.root_mean_squared_error(tf.one_hot(labels, 2), probabilities),
        "mean_p1": metrics.mean(probabilities[:, 1], weights=tf.cast(positive, tf.float32)),
    }
    train_op = tf1_train.MomentumOptimizer(0.1, 0.9).minimize(loss, tf1_train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=eval_metric_ops)


def input_fn(training, batch_size=16):
    dataset = tf.data.Dataset.from_tensor_slices((IMAGES, LABELS))
    return (dataset.repeat() if training else dataset).batch(batch_size)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_tf1_layers_and_metrics_train_and_stream_on_two_towers(tmp_path, strategy):
    est = common.Estimator(tf1_fn, str(tmp_path), config=common.RunConfig(
        tf_random_seed=3, save_checkpoints_steps=10, device_plan=models.plan(2, strategy)))
    before = est.evaluate(lambda: input_fn(False, 20))["loss"]
    est.train(lambda: input_fn(True), steps=20)
    results = est.evaluate(lambda: input_fn(False, 20))  # the last batch of 16 splits 8 + 8
    assert results["loss"] < before

    predicted = list(est.predict(lambda: input_fn(False, 20)))
    classes = np.array([p["classes"] for p in predicted])
    p = np.stack([p["probabilities"] for p in predicted])
    positive, said_positive = LABELS == 1, classes == 1
    assert results["accuracy"] == pytest.approx(np.mean(classes == LABELS))
    assert results["precision"] == pytest.approx((positive & said_positive).sum() / said_positive.sum())
    assert results["recall"] == pytest.approx((positive & said_positive).sum() / positive.sum())
    squared = (np.eye(2)[LABELS] - p) ** 2
    assert results["mse"] == pytest.approx(squared.mean(), rel=1e-5)
    assert results["rmse"] == pytest.approx(np.sqrt(squared.mean()), rel=1e-5)
    assert results["mean_p1"] == pytest.approx(p[positive, 1].mean(), rel=1e-5)
    auc = keras.metrics.AUC(num_thresholds=200)
    auc.update_state(positive, p[:, 1])
    assert results["auc"] == pytest.approx(float(auc.result()), abs=1e-6)

    saved = checkpoints.variable_shapes(tf.train.latest_checkpoint(str(tmp_path)))
    assert saved["model_fn/conv2d/kernel"] == [3, 3, 1, 4] and saved["model_fn/logits/kernel"] == [16, 2]
    assert "model_fn/batch_normalization/moving_mean" in saved


def test_tf1_batch_normalization_keeps_tf1_defaults(tmp_path):
    def bn_fn(features, labels, mode):
        normalized = layers.batch_normalization(features, training=mode == common.ModeKeys.TRAIN)
        loss = tf.reduce_mean(tf.square(layers.dense(normalized, 1, kernel_initializer="zeros") - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    x = RNG.randn(32, 3).astype(np.float32) * 2 + 5
    est = common.Estimator(bn_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, np.zeros((32, 1), np.float32))).repeat(), steps=1)
    moving_mean = est.get_variable_value("model_fn/batch_normalization/moving_mean")
    np.testing.assert_allclose(moving_mean, 0.01 * x.mean(axis=0), rtol=1e-5)  # TF1's momentum: 0.99


def test_sharing_a_tf1_layer_within_one_call_is_refused_by_name():
    with pytest.raises(NotImplementedError, match=r"\(layer 'tower'\): reuse=True within one call"):
        layers.dense(tf.zeros([1, 2]), 3, name="tower", reuse=True)
    tf.compat.v1.get_variable_scope().reuse_variables()  # the root scope's flag (set by whatever ran first)
    layers.dense(tf.zeros([1, 2]), 3, name="root")  # does not count
    with tf.compat.v1.variable_scope("shared", reuse=tf.compat.v1.AUTO_REUSE):
        with pytest.raises(NotImplementedError, match=r"\(layer 'tower'\): a variable_scope with reuse=.*"
                                                      r"would get weights of its own"):
            layers.dense(tf.zeros([1, 2]), 3, name="tower")


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


def test_numeric_feature_columns_feed_a_model_on_two_towers(tmp_path):
    columns = [tf.feature_column.numeric_column("a", shape=(2,)), tf.feature_column.numeric_column("b", shape=(2,))]

    def columns_fn(features, labels, mode):
        net = tf.compat.v1.feature_column.input_layer(features, columns)
        logits = layers.dense(layers.dense(net, 8, activation=tf.nn.relu), 3)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.AdamOptimizer(0.05).minimize(loss))

    features, labels = models.blobs(128)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"a": features[:, :2], "b": features[:, 2:]}, labels)).batch(32)

    est = common.Estimator(columns_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2, "GPU")))
    before = est.evaluate(input_fn)["loss"]
    est.train(lambda: input_fn().repeat(), steps=30)
    assert est.evaluate(input_fn)["loss"] < before / 3


@pytest.mark.parametrize("num_towers,jit_compile", [(1, False), (2, True)])
def test_tf1_layer_regularizers_reach_the_loss_through_get_regularization_loss(tmp_path, num_towers, jit_compile):
    """kernel_regularizer=l2(0.25) and the regularization loss as the only loss: gradient descent at 0.1
    scales the kernel by (1 - 0.1 * 2 * 0.25) a step and leaves the unregularized bias alone."""
    def regularized_fn(features, labels, mode):
        hidden = layers.dense(features, 2, kernel_initializer=tf.compat.v1.constant_initializer(2.0),
                              bias_initializer="ones", kernel_regularizer=keras.regularizers.l2(0.25))
        normed = layers.batch_normalization(hidden, training=mode == common.ModeKeys.TRAIN,
                                            gamma_regularizer=keras.regularizers.l2(0.5))
        loss = tf1_losses.get_regularization_loss()
        assert len(tf1_losses.get_regularization_losses()) == 2
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss)
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=normed)

    features, labels = models.blobs(16)
    est = common.Estimator(regularized_fn, str(tmp_path), config=common.RunConfig(
        device_plan=models.plan(num_towers), jit_compile=jit_compile))
    est.train(models.train_input(features, labels, 8), steps=3)
    np.testing.assert_allclose(est.get_variable_value("model_fn/dense/kernel"), np.full((4, 2), 2 * 0.95 ** 3),
                               rtol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("model_fn/dense/bias"), np.ones(2))
    np.testing.assert_allclose(est.get_variable_value("model_fn/batch_normalization/gamma"), np.full(2, 0.9 ** 3),
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="activity_regularizer is not supported"):
        layers.dense(tf.zeros([1, 2]), 3, activity_regularizer=keras.regularizers.l2(0.1))
