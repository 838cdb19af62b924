"""tf.contrib.estimator.replicate_model_fn over two logical devices: the Estimator trains the towers of its
devices (variables on the CPU) as RunConfig(device_plan=) towers do, to the same weights; TowerOptimizer is
the optimizer; TF1's refusals."""

import functools

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib.replicate import TowerOptimizer, replicate_model_fn
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(5)
X = RNG.randn(16, 3).astype(np.float32)
Y = (X @ [[1.0], [-2.0], [0.5]]).astype(np.float32)


def _model_fn(features, labels, mode):
    predictions = tf1_layers.dense(features, 1, kernel_initializer=tf.compat.v1.zeros_initializer(), name="linear")
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    optimizer = TowerOptimizer(tf1_train.GradientDescentOptimizer(0.1))
    return common.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss, tf1_train.get_global_step()))


def _input_fn():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(8).repeat()


def test_the_replicated_model_fn_trains_its_devices_towers_as_a_device_plan_does(tmp_path):
    replicated = common.Estimator(replicate_model_fn(_model_fn, devices=["/cpu:0", "/cpu:1"]), str(tmp_path / "r"))
    assert replicated.config.device_plan == models.plan(2)  # (towers on the devices, variables on the CPU)
    replicated.train(_input_fn, steps=4)
    planned = common.Estimator(_model_fn, str(tmp_path / "p"), config=common.RunConfig(device_plan=models.plan(2)))
    planned.train(_input_fn, steps=4)
    np.testing.assert_allclose(replicated.get_variable_value("linear/kernel"),
                               planned.get_variable_value("linear/kernel"), rtol=1e-6)
    assert np.abs(replicated.get_variable_value("linear/kernel")).sum() > 0.1  # (it trained)


def test_without_devices_on_a_machine_without_gpus_it_is_one_tower_on_the_cpu():
    assert replicate_model_fn(_model_fn).replicated_plan() == common.RunConfig().device_plan


def test_a_partial_model_fn_keeps_its_bound_arguments():
    def model_fn(features, labels, mode, params, scale):
        return _model_fn(features * scale, labels, mode)
    replicated = replicate_model_fn(functools.partial(model_fn, scale=2.0), devices=["/cpu:0"])
    est = common.Estimator(replicated, params={"unused": 1})
    est.train(_input_fn, steps=1)
    assert est.get_variable_value("global_step") == 1


def test_tf1s_refusals():
    with pytest.raises(ValueError, match="Tower losses need to be reduced in some way"):
        replicate_model_fn(_model_fn, loss_reduction=tf.compat.v1.losses.Reduction.NONE)
    summed = replicate_model_fn(_model_fn, loss_reduction=tf.compat.v1.losses.Reduction.SUM,
                                devices=["/cpu:0", "/cpu:1"])
    with pytest.raises(ValueError, match="over 2 towers summed their gradients"):
        common.Estimator(summed)
