"""The `.meta` beside each checkpoint restores it in a TF1 session, as tf.estimator's did."""

import numpy as np
import tensorflow as tf

import common
from common.state import meta_graph
from common.tf1 import train as tf1_train


def test_tf1s_import_meta_graph_on_a_model_dirs_meta_gives_a_saver_that_restores_the_checkpoint(tmp_path):
    """The TF1 program's restore, unedited: import_meta_graph(path + ".meta"), then saver.restore(sess, path)."""
    def model_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("linear"):
            weights = tf.compat.v1.get_variable("weights", [2, 1])
            bias = tf.compat.v1.get_variable("bias", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, weights) + bias - labels))
        train_op = tf1_train.MomentumOptimizer(0.05, 0.9).minimize(loss, tf.compat.v1.train.get_global_step())
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(0).randn(32, 2).astype(np.float32)
    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, x[:, :1] - x[:, 1:])).batch(8).repeat(), steps=7)
    checkpoint = est.latest_checkpoint()
    with tf.Graph().as_default() as graph:
        saver = tf.compat.v1.train.import_meta_graph(checkpoint + ".meta")
        with tf.compat.v1.Session() as session:
            saver.restore(session, checkpoint)
            assert session.run(tf.compat.v1.train.get_global_step()) == 7
            trainable = sorted(v.op.name for v in tf.compat.v1.trainable_variables())
            assert trainable == ["linear/bias", "linear/weights"]
            for name in ("linear/weights", "linear/bias", "linear/weights/Momentum"):
                np.testing.assert_array_equal(session.run(graph.get_tensor_by_name(name + ":0")),
                                              est.get_variable_value(name))


def test_the_meta_graph_is_built_once_per_set_of_variables():
    variables = {"a": tf.Variable(tf.zeros([3, 2])), "global_step": tf.Variable(0, dtype=tf.int64)}
    first = meta_graph.variables_meta_graph(variables)
    assert meta_graph.variables_meta_graph({"global_step": tf.Variable(5, dtype=tf.int64),
                                            "a": tf.Variable(tf.ones([3, 2]))}) is first
    meta = tf.compat.v1.MetaGraphDef.FromString(first)
    assert meta.meta_info_def.meta_graph_version == meta_graph.VARIABLES_ONLY_VERSION
    assert len(meta.graph_def.SerializeToString()) < 20000  # (zeros of the shape: no values in the graph)


def test_names_a_graph_would_refuse_restore_too(tmp_path):
    """A checkpoint name that is no op name (a Keras ':0', a leading '_', a 'save/...' the Saver's own ops
    would take): the variable takes the nearest op name and the Saver restores it from the checkpoint's."""
    values = {"odd name:0": [1.0, 2.0], "_private": [3.0], "save/Const": [4.0], "save": [5.0], "words": [b"a"]}
    variables = {name: tf.Variable(value) for name, value in values.items()}
    path = tf.compat.v1.train.Saver(var_list=variables).save(None, str(tmp_path / "model.ckpt"), write_meta_graph=False)
    with tf.Graph().as_default() as graph:
        saver = tf.compat.v1.train.import_meta_graph(
            tf.compat.v1.MetaGraphDef.FromString(meta_graph.variables_meta_graph(variables)))
        with tf.compat.v1.Session() as session:
            saver.restore(session, path)
            restored = {op: session.run(graph.get_tensor_by_name(op + ":0")).tolist()
                        for op in ("odd_name_0", "v_private", "save/Const", "save", "words")}
    assert restored == {"odd_name_0": [1.0, 2.0], "v_private": [3.0], "save/Const": [4.0], "save": [5.0],
                        "words": [b"a"]}
