"""A mode whose graph builds part of the model (a GAN's PREDICT graph, its generator alone): evaluation,
prediction and export restore what the graph builds and say how much of the checkpoint they left unread, as
TF1's Saver restored what the graph had; a variable the graph builds and the checkpoint lacks is still refused,
and training, whose saves would drop the rest, keeps the whole check."""

import logging
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.state.checkpoints import CheckpointMismatchError
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train

NOISE = np.random.RandomState(0).randn(8, 2).astype(np.float32)
REAL = np.random.RandomState(1).randn(8, 3).astype(np.float32)


def gan_fn(features, labels, mode, params):
    with tf.compat.v1.variable_scope("Generator"):
        fake = tf1_layers.dense(features["noise"], 3, name="out")
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"fake": fake},
                                    export_outputs={"serving_default": common.PredictOutput({"fake": fake})})
    with tf.compat.v1.variable_scope("Discriminator"):
        layer = tf.compat.v1.make_template("score", tf1_layers.dense, units=1, name="out")
        real_score, fake_score = layer(features["real"]), layer(fake)
    loss = tf.reduce_mean(tf.nn.softplus(-real_score)) + tf.reduce_mean(tf.nn.softplus(fake_score))
    if params.get("extra_in_eval") and mode == common.ModeKeys.EVAL:
        loss += tf.reduce_sum(tf.compat.v1.get_variable("not_trained", [1]))
    train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf1_train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    return tf.data.Dataset.from_tensors(({"noise": NOISE, "real": REAL}, np.zeros(8, np.float32)))


def test_predict_and_export_restore_the_generator_and_say_what_they_left_unread(tmp_path, caplog):
    est = common.Estimator(gan_fn, str(tmp_path), config=common.RunConfig(tf_random_seed=3))
    est.train(lambda: input_fn().repeat(), steps=2)
    kernel, bias = est.get_variable_value("Generator/out/kernel"), est.get_variable_value("Generator/out/bias")
    est = common.Estimator(gan_fn, str(tmp_path))  # (a new program: the serving job's)
    with caplog.at_level(logging.INFO):
        fakes = [p["fake"] for p in est.predict(lambda: tf.data.Dataset.from_tensors({"noise": NOISE}))]
    np.testing.assert_allclose(fakes, NOISE @ kernel + bias, rtol=1e-5, atol=1e-6)
    unread = [r.getMessage() for r in caplog.records if "left unread" in r.getMessage()]
    assert len(unread) == 1 and unread[0].startswith("2 variable(s) of ") and \
        "Discriminator/score/out/bias, Discriminator/score/out/kernel" in unread[0]

    def receiver():
        noise = tf.compat.v1.placeholder(tf.float32, [None, 2], name="noise")
        return common.ServingInputReceiver({"noise": noise}, {"noise": noise})

    path = common.Estimator(gan_fn, str(tmp_path)).export_saved_model(str(tmp_path / "export"), receiver)
    served = tf.saved_model.load(path).signatures["serving_default"](noise=tf.constant(NOISE))
    np.testing.assert_allclose(served["fake"].numpy(), NOISE @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_a_variable_the_mode_builds_and_the_checkpoint_lacks_is_refused_and_training_keeps_the_check(tmp_path):
    est = common.Estimator(gan_fn, str(tmp_path), config=common.RunConfig(tf_random_seed=3))
    est.train(lambda: input_fn().repeat(), steps=1)
    extra = common.Estimator(gan_fn, str(tmp_path), params={"extra_in_eval": True})
    with pytest.raises(CheckpointMismatchError, match="not in the checkpoint: not_trained"):
        extra.evaluate(input_fn, steps=1)

    def generator_only_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("Generator"):
            fake = tf1_layers.dense(features["noise"], 3, name="out")
        loss = tf.reduce_mean(tf.square(fake))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1_train.get_global_step()))

    before = sorted(os.listdir(tmp_path))
    with pytest.raises(CheckpointMismatchError, match="in the checkpoint but not in the model: Discriminator/"):
        common.Estimator(generator_only_fn, str(tmp_path)).train(lambda: input_fn().repeat(), steps=1)
    assert sorted(os.listdir(tmp_path)) == before  # (a save would have dropped the discriminator: none was made)
