"""get_regularization_loss: the TF1 layers regularizers reach the loss on every tower."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
import common.hooks
from common.tf1 import layers
from common.tf1 import losses as tf1_losses
from common.tf1 import train as tf1_train
from tests import models


@pytest.mark.parametrize("num_towers", [1, 2])
def test_tf1_layer_regularizers_reach_the_loss_through_get_regularization_loss(tmp_path, num_towers):
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
        device_plan=models.plan(num_towers)))
    est.train(models.train_input(features, labels, 8), steps=3)
    np.testing.assert_allclose(est.get_variable_value("dense/kernel"), np.full((4, 2), 2 * 0.95 ** 3),
                               rtol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("dense/bias"), np.ones(2))
    np.testing.assert_allclose(est.get_variable_value("batch_normalization/gamma"), np.full(2, 0.9 ** 3),
                               rtol=1e-6)


def test_an_activity_regularizer_files_its_loss_as_tf1_did():
    with tf.Graph().as_default():
        layers.dense(tf.ones([1, 2]), 3, kernel_initializer="ones", activity_regularizer=keras.regularizers.l2(0.1))
        losses = tf1_losses.get_regularization_losses()
        assert len(losses) == 1
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            assert session.run(losses[0]) == pytest.approx(0.1 * 3 * 2.0 ** 2)
