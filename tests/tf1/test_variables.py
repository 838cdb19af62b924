"""trainable_variables() inside model_fn: the model variables, so a weight decay over them trains every tower."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train
from common.tf1 import variables as tf1_variables
from tests import models

RNG = np.random.RandomState(3)
X = RNG.randn(8, 3).astype(np.float32)
Y = RNG.randn(8, 1).astype(np.float32)


@pytest.mark.parametrize("num_towers", [1, 2])
def test_weight_decay_over_tf1_trainable_variables_reaches_every_variable(tmp_path, num_towers):
    """tf.compat.v1.trainable_variables() (upgraded) lists the layers model_fn builds and its modules'
    variables; with the decay as the only loss, gradient descent scales each by (1 - lr) a step."""
    def decay_fn(features, labels, mode):
        hidden = tf1_layers.dense(features, 2, kernel_initializer=tf.compat.v1.constant_initializer(1.5),
                                  bias_initializer="ones")
        head = common.get_module("head", lambda: keras.layers.Dense(1, kernel_initializer="ones", name="head"))
        predictions = head(hidden)
        decay = tf.add_n([tf.nn.l2_loss(v) for v in tf1_variables.trainable_variables()])
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(decay)
        return common.EstimatorSpec(mode, loss=decay, train_op=train_op, predictions=predictions)

    est = common.Estimator(decay_fn, str(tmp_path), config=common.RunConfig(
        device_plan=models.plan(num_towers)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=3)
    values = {name: v for name, v in est.variable_values().items()
              if name != "global_step" and not name.startswith("optimizer/")}
    assert sorted(values) == ["dense/bias", "dense/kernel", "head/head/bias", "head/head/kernel"]
    np.testing.assert_allclose(values["dense/kernel"], np.full((3, 2), 1.5 * 0.9 ** 3), rtol=1e-6)
    np.testing.assert_allclose(values["dense/bias"], np.full(2, 0.9 ** 3), rtol=1e-6)
    np.testing.assert_allclose(values["head/head/kernel"], np.full((2, 1), 0.9 ** 3), rtol=1e-6)


def test_a_scope_picks_the_variables_whose_tf1_name_it_matches(tmp_path):
    seen = []

    def scoped_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("encoder"):
            hidden = tf1_layers.dense(features, 2)
        predictions = tf1_layers.dense(hidden, 1, name="head")
        seen.append(sorted(v.name for v in tf1_variables.trainable_variables(scope="encoder")))
        loss = tf.reduce_mean(tf.square(predictions - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    est = common.Estimator(scoped_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=1)
    est.evaluate(lambda: tf.data.Dataset.from_tensors((X, Y)))
    assert len(seen) == 3  # the building call, then serving ones (the .meta's, evaluate's): TF1's names in all
    assert all(names == ["encoder/dense/bias:0", "encoder/dense/kernel:0"] for names in seen)


@pytest.mark.parametrize("num_towers", [1, 2])
def test_a_keras_optimizer_over_get_variables_keeps_one_slot_per_variable(tmp_path, num_towers):
    """The listed variables are tf.Variables in the first call and served ones after; a Keras Adam over
    them names its slots alike in every call, so its state is made once and trained with."""
    def adam_fn(features, labels, mode):
        predictions = tf1_layers.dense(features, 1, kernel_initializer=tf.compat.v1.zeros_initializer(),
                                       use_bias=False, name="linear")
        loss = tf.reduce_mean(tf.square(predictions - labels))
        variables = tf1_variables.trainable_variables()
        optimizer = keras.optimizers.Adam(0.1)
        train_op = optimizer.apply_gradients(zip(tf.gradients(loss, variables), variables))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = common.Estimator(adam_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(num_towers)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=3)
    values = est.variable_values()
    assert sorted(n for n in values if "linear" in n) == [
        "linear/kernel", "model_fn/adam/linear_kernel_momentum", "model_fn/adam/linear_kernel_velocity"]
    np.testing.assert_allclose(values["linear/kernel"], models.linear_adam(X, Y, 3), rtol=1e-5)
    assert values["model_fn/adam/iteration"] == 3
