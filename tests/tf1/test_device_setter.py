"""replica_device_setter without ps tasks: a TF1 program's in-graph towers inside tf.device(setter) run as TF1
ran them, placed by their own device scopes; with ps tasks it is refused by count."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train
from common.tf1.device_setter import replica_device_setter

X = np.random.RandomState(0).randn(16, 3).astype(np.float32)
Y = (X @ [[1.0], [-2.0], [0.5]]).astype(np.float32)


def _towers_fn(with_setter, placed):
    def model_fn(features, labels, mode, params):
        setter = replica_device_setter(worker_device="/job:localhost/cpu:0", ps_device="/cpu:0",
                                       ps_strategy=None) if with_setter else None
        with tf.device(setter):
            losses = []
            for i, (x, y) in enumerate(zip(tf.split(features["x"], 2), tf.split(labels, 2))):
                with tf.device(f"/cpu:{i}"), tf.compat.v1.variable_scope("model", reuse=i > 0):
                    out = tf1_layers.dense(x, 1, name="out")
                    placed.append(out.device)
                    losses.append(tf.reduce_mean(tf.square(out - y)))
            loss = tf.add_n(losses) / 2
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf1_train.get_global_step())
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def test_in_graph_towers_under_a_setter_without_ps_tasks_train_as_without_it(tmp_path):
    kernels = {}
    for with_setter in (True, False):
        placed = []
        est = common.Estimator(_towers_fn(with_setter, placed), str(tmp_path / str(with_setter)),
                               config=common.RunConfig(tf_random_seed=1))
        est.train(lambda: tf.data.Dataset.from_tensors(({"x": X}, Y)).repeat(), steps=3)
        kernels[with_setter] = est.get_variable_value("model/out/kernel")
        assert placed == ["/device:CPU:0", "/device:CPU:1"]  # (each tower where its own scope put it)
    np.testing.assert_allclose(kernels[True], kernels[False], rtol=1e-6)
    assert not np.allclose(kernels[True], 0.0)


def test_ps_tasks_given_or_in_the_cluster_are_refused_by_count():
    assert replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    with pytest.raises(ValueError, match=r"replica_device_setter: 2 ps task\(s\): .*TF_CONFIG"):
        replica_device_setter(ps_tasks=2)
    with pytest.raises(ValueError, match=r"replica_device_setter: 3 ps task\(s\)"):
        replica_device_setter(cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]}))
