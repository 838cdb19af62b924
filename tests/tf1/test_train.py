"""TF1 optimizers in model_fn: minimize() as train_op, TF1 exact update rules, on towers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(3)
X = RNG.randn(8, 3).astype(np.float32)
Y = RNG.randn(8, 1).astype(np.float32)
STEPS = 6
DROP_AT = 3  # the learning rate goes from 0.1 to 0.01 before step 3, as a piecewise schedule does


def linear_regression(features, labels):
    """(predictions, loss, the learning rate dropping at DROP_AT) of the linear model both kinds train."""
    predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
    loss = tf.reduce_mean(tf.square(predictions - labels))
    learning_rate = tf.compat.v1.train.piecewise_constant(
        tf1_train.get_global_step(), [np.int64(DROP_AT - 1)], [0.1, 0.01])
    return predictions, loss, learning_rate


def linear_fn(make_optimizer):
    def model_fn(features, labels, mode):
        predictions, loss, learning_rate = linear_regression(features, labels)
        train_op = make_optimizer(learning_rate).minimize(loss, global_step=tf1_train.get_or_create_global_step())
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)
    return model_fn


def reference(update, slots):
    """Weights after STEPS full-batch steps of `update(w, g, lr, slots, t)` in numpy."""
    w = np.zeros((3, 1))
    for t in range(STEPS):
        lr = 0.1 if t < DROP_AT else 0.01
        g = 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
        w = update(w, g, lr, slots, t + 1)
    return w


def momentum(w, g, lr, slots, t):
    slots["a"] = 0.9 * slots.get("a", 0) + g
    return w - lr * slots["a"]


def nesterov(w, g, lr, slots, t):
    slots["a"] = 0.9 * slots.get("a", 0) + g
    return w - lr * (g + 0.9 * slots["a"])


def adam(w, g, lr, slots, t):
    slots["m"] = 0.9 * slots.get("m", 0) + 0.1 * g
    slots["v"] = 0.999 * slots.get("v", 0) + 0.001 * g * g
    return w - lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * slots["m"] / (np.sqrt(slots["v"]) + 1e-8)


def adagrad(w, g, lr, slots, t):
    slots["a"] = slots.get("a", 0.1) + g * g
    return w - lr * g / np.sqrt(slots["a"])


def rmsprop(w, g, lr, slots, t):
    slots["ms"] = 0.9 * slots.get("ms", 1.0) + 0.1 * g * g
    slots["mom"] = 0.5 * slots.get("mom", 0) + lr * g / np.sqrt(slots["ms"] + 1e-10)
    return w - slots["mom"]


def gradient_descent(w, g, lr, slots, t):
    return w - lr * g


OPTIMIZERS = {
    "momentum": (lambda lr: tf1_train.MomentumOptimizer(lr, momentum=0.9), momentum),
    "nesterov": (lambda lr: tf1_train.MomentumOptimizer(lr, 0.9, use_nesterov=True), nesterov),
    "adam": (tf1_train.AdamOptimizer, adam),
    "adagrad": (tf1_train.AdagradOptimizer, adagrad),
    "rmsprop": (lambda lr: tf1_train.RMSPropOptimizer(lr, momentum=0.5), rmsprop),
    "gradient_descent": (tf1_train.GradientDescentOptimizer, gradient_descent),
}


def train_weights(model_dir, make_optimizer, towers=1, strategy="CPU"):
    est = common.Estimator(linear_fn(make_optimizer), str(model_dir),
                           config=common.RunConfig(device_plan=models.plan(towers, strategy)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=STEPS)
    return est, est.variable_values()["model_fn/linear/kernel"]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_tf1_optimizer_updates_by_tf1_rule_through_a_learning_rate_drop(tmp_path, name):
    make_optimizer, rule = OPTIMIZERS[name]
    _, weights = train_weights(tmp_path, make_optimizer)
    np.testing.assert_allclose(weights, reference(rule, {}), rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_tf1_momentum_on_two_towers_matches_the_rule_and_resumes(tmp_path, strategy):
    make_optimizer, rule = OPTIMIZERS["momentum"]
    est, weights = train_weights(tmp_path, make_optimizer, towers=2, strategy=strategy)
    np.testing.assert_allclose(weights, reference(rule, {}), rtol=2e-5, atol=1e-7)
    assert est.evaluate(lambda: tf.data.Dataset.from_tensors((X, Y)))["global_step"] == STEPS
    assert "linear/kernel/Momentum" in est.get_variable_names()  # TF1's slot name


def test_keras_sgd_momentum_differs_from_tf1_after_the_drop(tmp_path):
    def keras_fn(features, labels, mode):
        _, loss, learning_rate = linear_regression(features, labels)
        optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(0.0, momentum=0.9))
        return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, learning_rate=learning_rate)

    est = common.Estimator(keras_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=STEPS)
    assert not np.allclose(est.variable_values()["model_fn/linear/kernel"], reference(momentum, {}), rtol=1e-3)


def test_the_train_op_loss_is_the_one_differentiated(tmp_path):
    def model_fn(features, labels, mode):
        predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss * 0.0)
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=2)
    assert not np.any(est.variable_values()["model_fn/linear/kernel"])


def test_a_train_op_that_updates_nothing_the_towers_can_average_is_refused_by_name(tmp_path):
    def model_fn(features, labels, mode):
        loss = tf.reduce_mean(keras.layers.Dense(1)(features))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    est = common.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="train_op updates nothing the framework can average over towers"):
        est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=1)
    assert not (tmp_path / "writer.lock").exists()
