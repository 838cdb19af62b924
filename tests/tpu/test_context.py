"""params["context"] and params["use_tpu"] as TPU programs read them, with use_tpu=False off any TPU: one host,
one replica, the whole batch of the mode (which the towers split)."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import train as tf1_train
from common.tpu import context as tpu_context
from common.tpu import estimator as tpu
from common.tpu import run_config
from tests import models

RNG = np.random.RandomState(7)
X = RNG.randn(16, 3).astype(np.float32)
Y = (X @ np.array([[0.5], [1.0], [-1.5]], np.float32)).astype(np.float32)


def sharded_input_fn(params):
    """A TPU input_fn: each invocation reads its share of the files, on the host device it is given."""
    context = params["context"]
    host, index, invocations, replicas = context.current_input_fn_deployment()
    params["seen"].append(("input_fn", host, index, invocations, replicas, context.num_hosts, context.current_host))
    with tf.device(host):
        files = tf.data.Dataset.from_tensor_slices((X, Y)).shard(invocations, index)
        return files.repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    context = params["context"]
    params["seen"].append(("model_fn", params["use_tpu"], context.num_replicas, context.num_of_replicas_per_host,
                           context.device_for_replica(0)))
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
    optimizer = tf1_train.GradientDescentOptimizer(0.1 * context.num_replicas)  # (scaled by replicas, as TPU code)
    if params["use_tpu"]:
        optimizer = tpu.CrossShardOptimizer(optimizer)
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
        loss, tf.compat.v1.train.get_global_step()))


@pytest.mark.parametrize("towers", [1, 2])
def test_a_tpu_input_fn_sharding_by_its_deployment_reads_all_the_data_on_one_host(tmp_path, towers):
    seen = models.SharedLog()
    est = tpu.TPUEstimator(model_fn, config=run_config.RunConfig(model_dir=str(tmp_path),
                                                                 device_plan=models.plan(towers)),
                           params={"seen": seen}, use_tpu=False, train_batch_size=16)
    est.train(sharded_input_fn, max_steps=4)
    w = np.zeros((3, 1))
    for _ in range(4):  # (the whole data each step: the one invocation's shard is all of it)
        w = w - 0.1 * 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
    np.testing.assert_allclose(est.variable_values()["w"], w, rtol=1e-5)
    assert ("input_fn", "/device:CPU:0", 0, 1, 1, 1, 0) in list(seen)
    assert set(entry for entry in seen if entry[0] == "model_fn") == {("model_fn", False, 1, 1, ("/device:CPU:0", 0))}


def test_the_context_has_one_replica_and_context_in_params_is_refused_by_name(tmp_path):
    context = tpu_context.TPUContext(common.ModeKeys.EVAL)
    assert context.device_assignment is None and context.mode == common.ModeKeys.EVAL
    with pytest.raises(ValueError, match="device_for_replica\\(1\\): there is one replica here"):
        context.device_for_replica(1)
    with pytest.raises(ValueError, match='params must not hold "context": TPUEstimator sets it'):
        tpu.TPUEstimator(model_fn, str(tmp_path), params={"context": None}, use_tpu=False, train_batch_size=8)
