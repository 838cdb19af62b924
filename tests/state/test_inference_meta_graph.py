"""A TF2 function of the features becomes the graph a TF1 session imports, restores and runs by name."""

import numpy as np
import pytest
import tensorflow as tf

from common.state import inference_meta_graph


def _function(kernel, bias, offset):
    @tf.function
    def predictions(x):
        with tf.name_scope("dense"):
            logits = tf.matmul(x, kernel) + bias + offset
        return {"probabilities": tf.nn.softmax(logits, name="softmax_tensor"), "classes": tf.argmax(logits, 1)}
    return predictions.get_concrete_function(tf.TensorSpec([None, 3], tf.float32, name="x"))


def _checkpoint(tmp_path, variables):
    return tf.compat.v1.train.Saver(var_list=variables).save(None, str(tmp_path / "model.ckpt"),
                                                             write_meta_graph=False)


def test_the_graph_imports_restores_and_runs_the_functions_ops_by_name(tmp_path):
    kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)
    bias = tf.Variable([0.5, -0.5])
    slot = tf.Variable(tf.fill([3, 2], 7.0), trainable=False)
    step = tf.Variable(42, dtype=tf.int64, trainable=False)
    function = _function(kernel, bias, tf.constant([1.0, 0.0]))  # (a captured constant travels as its value)
    variables = {"dense/kernel": kernel, "dense/bias": bias, "dense/kernel/Momentum": slot, "global_step": step}
    path = _checkpoint(tmp_path, variables)
    serialized = inference_meta_graph.inference_meta_graph(function, variables, "global_step")
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    expected = function(tf.constant(x))
    with tf.Graph().as_default():
        saver = tf.compat.v1.train.import_meta_graph(tf.compat.v1.MetaGraphDef.FromString(serialized))
        with tf.compat.v1.Session() as session:
            saver.restore(session, path)
            np.testing.assert_allclose(session.run("softmax_tensor:0", {"x:0": x}), expected["probabilities"],
                                       rtol=1e-6)
            assert session.run(tf.compat.v1.train.get_global_step()) == 42
            assert sorted(v.op.name for v in tf.compat.v1.trainable_variables()) == ["dense/bias", "dense/kernel"]
            found = {v.op.name: v for v in tf.compat.v1.global_variables()}  # (resource variables, as TF2's)
            np.testing.assert_array_equal(session.run(found["dense/kernel/Momentum"]), np.full([3, 2], 7.0))
    meta = tf.compat.v1.MetaGraphDef.FromString(serialized)
    signature = meta.signature_def["serving_default"]
    assert meta.meta_info_def.meta_graph_version == inference_meta_graph.INFERENCE_VERSION
    assert list(signature.inputs) == ["x"] and sorted(signature.outputs) == ["classes", "probabilities"]


def test_a_lookup_table_travels_as_a_copy_the_tables_initializer_fills():
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["red", "blue"], [3, 7], value_dtype=tf.int64), -1)

    @tf.function
    def lookup(words):
        return {"ids": table.lookup(words)}
    function = lookup.get_concrete_function(tf.TensorSpec([None], tf.string, name="words"))
    serialized = inference_meta_graph.inference_meta_graph(function, {})
    with tf.Graph().as_default():
        tf.compat.v1.train.import_meta_graph(tf.compat.v1.MetaGraphDef.FromString(serialized))
        output = tf.compat.v1.MetaGraphDef.FromString(serialized).signature_def["serving_default"].outputs["ids"]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.tables_initializer())
            assert session.run(output.name, {"words:0": ["blue", "red", "green"]}).tolist() == [7, 3, -1]


def test_a_table_too_large_to_copy_is_refused_with_its_size(monkeypatch):
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3]), -1)

    @tf.function
    def lookup(words):
        return table.lookup(words)
    monkeypatch.setattr(inference_meta_graph, "MAX_TABLE_ENTRIES", 2)
    with pytest.raises(inference_meta_graph.NotConvertible, match="a lookup table of 3 entries"):
        inference_meta_graph.inference_meta_graph(
            lookup.get_concrete_function(tf.TensorSpec([None], tf.string, name="words")), {})


def test_a_resource_neither_a_variable_nor_a_table_is_refused_by_name():
    other = tf.Variable([1.0, 2.0])  # (one the caller does not name: made outside model_fn)

    @tf.function
    def scaled(x):
        return x * other
    function = scaled.get_concrete_function(tf.TensorSpec([2], tf.float32, name="x"))
    with pytest.raises(inference_meta_graph.NotConvertible, match="a resource no checkpoint name restores"):
        inference_meta_graph.inference_meta_graph(function, {})


def test_without_a_step_the_function_reads_the_graph_makes_its_own():
    kernel, bias = tf.Variable(tf.ones([3, 2])), tf.Variable(tf.zeros([2]))
    serialized = inference_meta_graph.inference_meta_graph(_function(kernel, bias, tf.zeros([2])),
                                                           {"k": kernel, "b": bias}, "global_step")
    with tf.Graph().as_default():
        tf.compat.v1.train.import_meta_graph(tf.compat.v1.MetaGraphDef.FromString(serialized))
        assert tf.compat.v1.train.get_global_step().op.name == "global_step"


def test_a_feature_the_predictions_do_not_read_is_still_a_placeholder_of_the_signature():
    kernel = tf.Variable(tf.ones([3, 1]))

    @tf.function
    def predictions(features):
        return tf.matmul(features["x"], kernel)
    function = predictions.get_concrete_function({"x": tf.TensorSpec([None, 3], tf.float32, name="x"),
                                                  "weight": tf.TensorSpec([None], tf.float32, name="weight")})
    meta = tf.compat.v1.MetaGraphDef.FromString(inference_meta_graph.inference_meta_graph(function, {"k": kernel}))
    assert sorted(meta.signature_def["serving_default"].inputs) == ["weight", "x"]


def test_nested_predictions_are_named_by_their_paths():
    kernel = tf.Variable(tf.ones([3, 2]))

    @tf.function
    def predictions(x):
        logits = tf.matmul(x, kernel)
        return {"head": {"logits": logits, "probabilities": tf.nn.softmax(logits)}, "classes": tf.argmax(logits, 1)}
    function = predictions.get_concrete_function(tf.TensorSpec([None, 3], tf.float32, name="x"))
    meta = tf.compat.v1.MetaGraphDef.FromString(inference_meta_graph.inference_meta_graph(function, {"k": kernel}))
    outputs = meta.signature_def["serving_default"].outputs
    assert sorted(outputs) == ["classes", "head/logits", "head/probabilities"]
    assert outputs["classes"].dtype == tf.int64.as_datatype_enum
    assert outputs["head/logits"].tensor_shape.dim[1].size == 2

