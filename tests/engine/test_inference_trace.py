"""Each checkpoint's `.meta` is model_fn's inference graph: a TF1 program imports it, restores the checkpoint
and gets Estimator.predict's numbers, as it did from tf.estimator's model dirs."""

import logging

import numpy as np
import tensorflow as tf

import common
from common.canned import estimators
from common.state import inference_meta_graph, meta_graph
from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train

_X = np.random.RandomState(0).randn(64, 3).astype(np.float32)


def _model_fn(features, labels, mode):
    hidden = tf1_layers.dense(features["x"], 4, activation=tf.nn.relu, name="hidden")
    logits = tf1_layers.dense(hidden, 2, name="logits")
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
                                                       "classes": tf.argmax(logits, 1)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf1_train.MomentumOptimizer(0.1, 0.9).minimize(loss, tf.compat.v1.train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _train(model_fn, model_dir, steps=10):
    est = common.Estimator(model_fn, str(model_dir))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, (_X[:, 0] > 0).astype(np.int32)))
              .repeat().batch(16), steps=steps)
    return est


def test_a_tf1_session_on_the_meta_runs_the_models_tensors_with_predicts_numbers(tmp_path):
    est = _train(_model_fn, tmp_path)
    predicted = np.stack([p["probabilities"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": _X[:5]}).batch(5))])
    path = est.latest_checkpoint()
    meta = tf.compat.v1.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    assert meta.meta_info_def.meta_graph_version == inference_meta_graph.INFERENCE_VERSION
    with tf.Graph().as_default():
        saver = tf.compat.v1.train.import_meta_graph(path + ".meta")
        with tf.compat.v1.Session() as session:
            saver.restore(session, path)
            np.testing.assert_allclose(session.run("softmax_tensor:0", {"x:0": _X[:5]}), predicted, rtol=1e-5)
            assert session.run(tf.compat.v1.train.get_global_step()) == 10
            names = sorted(v.op.name for v in tf.compat.v1.global_variables())
    assert names == ["global_step", "hidden/bias", "hidden/bias/Momentum", "hidden/kernel",
                     "hidden/kernel/Momentum", "logits/bias", "logits/bias/Momentum", "logits/kernel",
                     "logits/kernel/Momentum"]
    assert sorted(meta.signature_def["serving_default"].outputs) == ["classes", "probabilities"]


def test_a_model_fn_without_a_predict_mode_gets_the_variables_alone_and_says_why(tmp_path, caplog):
    def train_only(features, labels, mode):
        assert mode != common.ModeKeys.PREDICT, "this model only trains"
        return _model_fn(features, labels, mode)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est = _train(train_only, tmp_path, steps=2)
    path = est.latest_checkpoint()
    meta = tf.compat.v1.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    assert meta.meta_info_def.meta_graph_version == meta_graph.VARIABLES_ONLY_VERSION
    said = [r.getMessage() for r in caplog.records if "holds the variables alone" in r.getMessage()]
    assert len(said) == 1 and "AssertionError: this model only trains" in said[0]
    with tf.Graph().as_default():
        saver = tf.compat.v1.train.import_meta_graph(path + ".meta")
        with tf.compat.v1.Session() as session:
            saver.restore(session, path)
            assert session.run(tf.compat.v1.train.get_global_step()) == 2


def test_a_premade_estimators_vocabulary_lookup_comes_along_in_the_meta(tmp_path):
    """A canned classifier over a vocabulary column: its table is in the `.meta`, filled by TF1's
    tables_initializer, and a TF1 session gets predict()'s probabilities."""
    color = tf.feature_column.categorical_column_with_vocabulary_list("color", ["red", "blue", "green"])
    est = estimators.LinearClassifier([color, tf.feature_column.numeric_column("x")], model_dir=str(tmp_path))
    colors = np.array(["red", "blue", "green", "red"] * 8)
    features = {"color": colors, "x": _X[:32, :1]}
    est.train(lambda: tf.data.Dataset.from_tensor_slices((features, (colors == "red").astype(np.int32)))
              .repeat().batch(8), steps=5)
    predicted = [p["probabilities"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"color": colors[:4], "x": _X[:4, :1]}).batch(4))]
    path = est.latest_checkpoint()
    meta = tf.compat.v1.MetaGraphDef.FromString(open(path + ".meta", "rb").read())
    assert meta.meta_info_def.meta_graph_version == inference_meta_graph.INFERENCE_VERSION
    probabilities = meta.signature_def["serving_default"].outputs["probabilities"].name
    with tf.Graph().as_default():
        saver = tf.compat.v1.train.import_meta_graph(path + ".meta")
        with tf.compat.v1.Session() as session:
            saver.restore(session, path)
            session.run(tf.compat.v1.tables_initializer())
            np.testing.assert_allclose(session.run(probabilities, {"color:0": colors[:4], "x:0": _X[:4, :1]}),
                                       np.stack(predicted), rtol=1e-5)
