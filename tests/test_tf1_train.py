"""TF1 optimizers in model_fn: minimize() as train_op, TF1's exact update rules, on towers."""

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
STEPS = 6
DROP_AT = 3  # the learning rate goes from 0.1 to 0.01 before step 3, as a piecewise schedule does


def linear_fn(make_optimizer):
    def model_fn(features, labels, mode):
        predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        learning_rate = tf.compat.v1.train.piecewise_constant(
            tf1_train.get_global_step(), [np.int64(DROP_AT - 1)], [0.1, 0.01])
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
    return est, est._model.named_state(False)["model_fn/linear/kernel"].numpy()


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
    slots = [name for name in est._model.named_state(True) if name.startswith("optimizer/")]
    assert any(name.endswith("linear_kernel_momentum") for name in slots)


def test_keras_sgd_momentum_differs_from_tf1_after_the_drop(tmp_path):
    _, keras_weights = train_weights(tmp_path, lambda lr: _KerasMomentum(lr))
    tf1 = reference(momentum, {})
    assert not np.allclose(keras_weights, tf1, rtol=1e-3)


class _KerasMomentum(tf1_train.Optimizer):
    def _make(self, learning_rate):
        return keras.optimizers.SGD(learning_rate, momentum=0.9)


def test_the_train_op_loss_is_the_one_differentiated(tmp_path):
    def model_fn(features, labels, mode):
        predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss * 0.0)
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=2)
    assert not np.any(est._model.named_state(False)["model_fn/linear/kernel"].numpy())


def test_a_train_op_that_is_not_minimize_is_refused_by_name(tmp_path):
    def model_fn(features, labels, mode):
        loss = tf.reduce_mean(keras.layers.Dense(1)(features))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    est = common.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="train_op is a .*common.tf1.train"):
        est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=1)
    with pytest.raises(NotImplementedError, match="return optimizer.minimize"):
        tf1_train.AdamOptimizer().compute_gradients(tf.constant(1.0))


@pytest.mark.parametrize("num_towers,jit_compile", [(1, False), (2, True)])
def test_weight_decay_over_tf1_trainable_variables_reaches_every_variable(tmp_path, num_towers, jit_compile):
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
        device_plan=models.plan(num_towers), jit_compile=jit_compile))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=3)
    values = {name: v.numpy() for name, v in est._model.named_state(False).items() if name != "global_step"}
    assert sorted(values) == ["head/head/bias", "head/head/kernel", "model_fn/dense/bias", "model_fn/dense/kernel"]
    np.testing.assert_allclose(values["model_fn/dense/kernel"], np.full((3, 2), 1.5 * 0.9 ** 3), rtol=1e-6)
    np.testing.assert_allclose(values["model_fn/dense/bias"], np.full(2, 0.9 ** 3), rtol=1e-6)
    np.testing.assert_allclose(values["head/head/kernel"], np.full((2, 1), 0.9 ** 3), rtol=1e-6)
    with pytest.raises(ValueError, match=r"trainable_variables\(scope='dense'\): variable scopes do not name"):
        tf1_variables.trainable_variables(scope="dense")


@pytest.mark.parametrize("tf1", [False, True])
def test_gradients_clipped_by_global_norm_after_the_towers_average_them(tmp_path, tf1):
    """One gradient-descent step at rate 1 from zero weights moves them by -g * 0.05 / |g| (|g| > 0.05)."""
    def clipped_fn(features, labels, mode):
        predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        if tf1:
            train_op = common.clip_gradients_by_norm(tf1_train.GradientDescentOptimizer(1.0), 0.05).minimize(loss)
            return common.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)
        optimizer = common.get_optimizer(lambda: common.clip_gradients_by_norm(keras.optimizers.SGD(1.0), 0.05))
        return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions=predictions)

    est = common.Estimator(clipped_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=1)
    gradient = -2 * X.T.astype(np.float64) @ Y / len(X)
    assert np.linalg.norm(gradient) > 0.05
    np.testing.assert_allclose(est.get_variable_value("model_fn/linear/kernel"),
                               -gradient * 0.05 / np.linalg.norm(gradient), rtol=1e-5)
    with pytest.raises(ValueError, match="the optimizer already clips"):
        common.clip_gradients_by_norm(keras.optimizers.SGD(1.0, clipnorm=1.0), 0.05)
