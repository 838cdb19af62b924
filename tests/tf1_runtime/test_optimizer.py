"""Users' own tf.compat.v1.train.Optimizer subclasses in model_fn, on one and two towers: an
apply_gradients override that makes its slots with get_variable and assigns the variables itself (BERT's
AdamWeightDecayOptimizer, written as its program writes it), an _apply_dense override with TF1's slot
helpers, and sparse gradients."""

import re

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(11)
X = RNG.randn(8, 3).astype(np.float32)
Y = RNG.randn(8, 1).astype(np.float32)
STEPS = 5


class AdamWeightDecay(tf1_train.Optimizer):
    """google-research/bert's optimization.AdamWeightDecayOptimizer, as that program writes it."""

    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 name="AdamWeightDecayOptimizer"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = re.match("^(.*):\\d+$", param.name).group(1)
            m = tf.compat.v1.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(),
                                          dtype=tf.float32, trainable=False,
                                          initializer=tf.compat.v1.zeros_initializer())
            v = tf.compat.v1.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(),
                                          dtype=tf.float32, trainable=False,
                                          initializer=tf.compat.v1.zeros_initializer())
            next_m = self.beta_1 * m + (1.0 - self.beta_1) * grad
            next_v = self.beta_2 * v + (1.0 - self.beta_2) * tf.square(grad)
            update = next_m / (tf.sqrt(next_v) + self.epsilon) + self.weight_decay_rate * param
            assignments.extend([param.assign(param - self.learning_rate * update), m.assign(next_m),
                                v.assign(next_v)])
        return tf.group(*assignments, name=name)


def bert_style_fn(features, labels, mode, params):
    """BERT's create_optimizer: tf.gradients over the trainable variables, clipped by global norm, then
    the optimizer's apply_gradients, and the global step counted by hand."""
    with tf.compat.v1.variable_scope("linear"):
        kernel = tf.compat.v1.get_variable("kernel", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, kernel) - labels))
    global_step = tf.compat.v1.train.get_or_create_global_step()
    tvars = tf.compat.v1.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), clip_norm=params["clip_norm"])
    train_op = AdamWeightDecay(0.1, weight_decay_rate=0.01).apply_gradients(zip(grads, tvars), global_step)
    train_op = tf.group(train_op, [global_step.assign(global_step + 1)])
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


def bert_reference(clip_norm, steps=STEPS):
    w, m, v = np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((3, 1))
    for _ in range(steps):
        g = 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
        g = g * min(1.0, clip_norm / np.linalg.norm(g))
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w = w - 0.1 * (m / (np.sqrt(v) + 1e-6) + 0.01 * w)
    return w


def train(model_fn, model_dir, towers, steps=STEPS, params=None, data=(X, Y)):
    est = common.Estimator(model_fn, str(model_dir), params=params,
                           config=common.RunConfig(device_plan=models.plan(towers)))
    est.train(lambda: tf.data.Dataset.from_tensors(data).repeat(), steps=steps)
    return est


@pytest.mark.parametrize("towers", [1, 2])
def test_an_apply_gradients_override_runs_once_a_step_on_the_towers_average(tmp_path, towers):
    est = train(bert_style_fn, tmp_path, towers, params={"clip_norm": 100.0})
    values = est.variable_values()
    np.testing.assert_allclose(values["linear/kernel"], bert_reference(100.0), rtol=2e-5)
    assert {"linear/kernel/adam_m", "linear/kernel/adam_v"} <= set(est.get_variable_names())  # its own names
    assert values["global_step"] == STEPS  # counted once a step, not once a tower


def test_gradients_clipped_by_global_norm_in_model_fn_are_clipped_then_applied(tmp_path):
    clip_norm = 0.05  # far below the gradient's norm: every step is clipped
    est = train(bert_style_fn, tmp_path, 1, params={"clip_norm": clip_norm})
    np.testing.assert_allclose(est.variable_values()["linear/kernel"], bert_reference(clip_norm), rtol=2e-5)
    assert not np.allclose(bert_reference(clip_norm), bert_reference(100.0), rtol=1e-2)


def test_the_optimizer_resumes_from_its_checkpointed_slots(tmp_path):
    train(bert_style_fn, tmp_path, 1, steps=2, params={"clip_norm": 100.0})
    est = train(bert_style_fn, tmp_path, 1, steps=STEPS - 2, params={"clip_norm": 100.0})
    np.testing.assert_allclose(est.variable_values()["linear/kernel"], bert_reference(100.0), rtol=2e-5)


class HeavyBall(tf1_train.Optimizer):
    """A TF1 subclass written the usual way: a zeros slot and an _apply_dense."""

    def __init__(self, learning_rate):
        super().__init__(False, "HeavyBall")
        self._learning_rate = learning_rate

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "velocity", self._name)

    def _apply_dense(self, grad, var):
        velocity = self.get_slot(var, "velocity")
        new_velocity = velocity.assign(0.5 * velocity + grad)
        return var.assign_sub(self._learning_rate * new_velocity)


def heavy_ball_fn(features, labels, mode):
    kernel = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, kernel) - labels))
    return common.EstimatorSpec(mode, loss=loss, train_op=HeavyBall(0.1).minimize(loss))


@pytest.mark.parametrize("towers", [1, 2])
def test_an_apply_dense_override_gets_tf1_slots_named_as_tf1_named_them(tmp_path, towers):
    est = train(heavy_ball_fn, tmp_path, towers)
    w, velocity = np.zeros((3, 1)), np.zeros((3, 1))
    for _ in range(STEPS):
        velocity = 0.5 * velocity + 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
        w = w - 0.1 * velocity
    values = est.variable_values()
    np.testing.assert_allclose(values["w"], w, rtol=2e-5)
    np.testing.assert_allclose(values["w/HeavyBall"], velocity, rtol=2e-5)


def embedding_fn(features, labels, mode):
    table = tf.compat.v1.get_variable("table", [5, 2], initializer=tf.compat.v1.ones_initializer())
    rows = tf.gather(table, features)  # a sparse (IndexedSlices) gradient
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(rows, axis=1) - labels))
    return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.AdamOptimizer(0.1).minimize(loss))


@pytest.mark.parametrize("towers", [1, 2])
def test_sparse_gradients_update_only_the_rows_looked_up(tmp_path, towers):
    ids = np.array([0, 2, 2, 0], np.int64)  # each tower's shard holds rows 0 and 2
    est = train(embedding_fn, tmp_path, towers, steps=3, data=(ids, np.zeros(4, np.float32)))
    table = est.variable_values()["table"]
    np.testing.assert_array_equal(table[[1, 3, 4]], np.ones((3, 2)))
    assert np.all(table[[0, 2]] < 1.0)
    # Adam's sparse rule moves a looked-up row by about the learning rate a step
    np.testing.assert_allclose(table[[0, 2]], np.full((2, 2), 1.0 - 3 * 0.1), atol=0.02)


def test_two_adams_of_one_model_fn_keep_a_step_count_each_as_tf1s_graph_named_them(tmp_path):
    """A GAN's two Adams, grouped in one train_op: TF1 made optimizer/beta1_power and optimizer/beta1_power_1 (the
    scope minimize was called in); sharing one pair would advance it twice a step and bias-correct both updates
    wrongly."""
    def gan_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("g"):
            fake = tf.matmul(features, tf.compat.v1.get_variable("w", [3, 1]))
        with tf.compat.v1.variable_scope("d"):
            critic = tf.compat.v1.get_variable("w", [1])
        d_loss, g_loss = tf.reduce_mean(critic * (fake - labels)), -tf.reduce_mean(critic * fake)
        with tf.name_scope("optimizer"):  # (TF 2.15 named the counters under the scope minimize was called in)
            d_op = tf1_train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=[critic])
            g_op = tf1_train.AdamOptimizer(0.01, beta1=0.5).minimize(
                g_loss, var_list=[tf.compat.v1.trainable_variables("g")[0]], global_step=tf1_train.get_global_step())
        return common.EstimatorSpec(mode, loss=g_loss, train_op=tf.group(d_op, g_op))

    est = common.Estimator(gan_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=3)
    assert est.get_variable_value("optimizer/beta1_power") == est.get_variable_value("optimizer/beta1_power_1") \
        == 0.5 ** 4
    np.testing.assert_allclose(est.get_variable_value("optimizer/beta2_power_1"), 0.999 ** 4, rtol=1e-6)


def test_two_adams_made_outside_model_fn_keep_a_step_count_each_too(tmp_path):
    optimizers = [tf1_train.AdamOptimizer(0.01), tf1_train.AdamOptimizer(0.01)]  # (made before the Estimator)

    def two_fn(features, labels, mode):
        first = tf.compat.v1.get_variable("first", [3, 1])
        second = tf.compat.v1.get_variable("second", [3, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features, first) + tf.matmul(features, second) - labels))
        train_op = tf.group(optimizers[0].minimize(loss, var_list=[first]), optimizers[1].minimize(
            loss, var_list=[second], global_step=tf1_train.get_global_step()))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = common.Estimator(two_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=2)
    assert est.get_variable_value("beta1_power") == pytest.approx(0.9 ** 3)
    assert est.get_variable_value("beta1_power_1") == pytest.approx(0.9 ** 3)
