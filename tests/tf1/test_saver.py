"""A tf.compat.v1.train.Saver made inside model_fn and handed to Scaffold builds no op that would run at every
step; outside model_fn it is TensorFlow's."""

import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.state import meta_graph
from common.tf1 import saver as tf1_saver
from common.tf1 import train as tf1_train


def test_a_saver_in_model_fn_writes_nothing_of_its_own_and_the_estimator_checkpoints_as_usual(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a Saver's ops, run at every step, would have written ./model.*
    made = []

    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features * weight - labels))
        saver = tf1_saver.Saver(sharded=True, max_to_keep=3)
        made.append(saver)
        return common.EstimatorSpec(mode, loss=loss, scaffold=tf1_train.Scaffold(saver=saver),
                                    train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(([1.0], [2.0])).repeat(), steps=3)
    assert sorted(os.listdir(tmp_path)) == ["model"]
    np.testing.assert_allclose(est.get_variable_value("w"), [2 * (1 - 0.8 ** 3)], rtol=1e-5)  # trained to 2
    assert made and made[0].max_to_keep == 3
    with pytest.raises(RuntimeError, match=r"Saver.save\(\) inside model_fn: there is no session here"):
        made[0].save(None, "x")


def test_outside_model_fn_it_is_tensorflows_saver():
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("v", [1])
        assert isinstance(tf1_saver.Saver(), tf.compat.v1.train.Saver)


def test_import_meta_graph_refuses_this_projects_old_graphless_meta_files_by_name_and_imports_the_others(tmp_path):
    """TensorFlow's import_meta_graph returned None on the graphless `.meta` this project wrote before, and the
    program failed later on None.restore; the `.meta` written now imports as a TF1 graph's."""
    def model_fn(features, labels, mode):
        loss = tf.reduce_sum(tf.compat.v1.get_variable("w", [1]) * features)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors([1.0]).repeat(), steps=1)
    checkpoint = est.latest_checkpoint()
    with tf.Graph().as_default():
        restorer = tf1_saver.import_meta_graph(checkpoint + ".meta")
        with tf.compat.v1.Session() as session:
            restorer.restore(session, checkpoint)
            assert session.run("w:0").tolist() == est.get_variable_value("w").tolist()
    old = tf.compat.v1.MetaGraphDef()
    old.meta_info_def.meta_graph_version = meta_graph.GRAPHLESS_VERSION
    with open(checkpoint + ".meta", "wb") as stub:
        stub.write(old.SerializeToString())
    with tf.Graph().as_default():
        assert tf.compat.v1.train.import_meta_graph(checkpoint + ".meta") is None  # (TensorFlow's own, on it)
        with pytest.raises(ValueError, match=f"{checkpoint}.meta holds no graph: .*tf.train.load_checkpoint"):
            tf1_saver.import_meta_graph(checkpoint + ".meta")
