"""The dense path of feature columns of one value per example: TensorFlow's outputs, variables and
gradients (one row per distinct present id), its own layers wherever a feature or column is not covered."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common import canned
from common.canned import dense_columns

fc = tf.feature_column
WORDS = ["red", "green", "blue"]


def _columns():
    color = fc.categorical_column_with_vocabulary_list("color", WORDS)
    color_oov = fc.categorical_column_with_vocabulary_list("color", WORDS, num_oov_buckets=2)
    color_default = fc.categorical_column_with_vocabulary_list("color", WORDS, default_value=1)
    code = fc.categorical_column_with_vocabulary_list("code", [3, 5, 7], dtype=tf.int64)
    city = fc.categorical_column_with_hash_bucket("city", 5)
    zone = fc.categorical_column_with_hash_bucket("zone", 4, dtype=tf.int64)
    age = fc.numeric_column("age", normalizer_fn=lambda x: x / 10.0)
    ages = fc.bucketized_column(age, [2.0, 4.0])
    cross = fc.crossed_column(["city", ages], 11)
    linear = [color, code, city, zone, ages, cross, age, fc.numeric_column("pair", shape=(2,))]
    deep = [fc.indicator_column(color_oov), fc.indicator_column(code), fc.embedding_column(color_default, 3),
            fc.embedding_column(city, 2, combiner="sqrtn"), fc.embedding_column(cross, 2), ages, age,
            fc.indicator_column(zone)]
    return linear, deep


def _features():
    """Missing values ('' and -1), words and codes outside the vocabulary."""
    return {"color": tf.constant([["red"], [""], ["pink"], ["blue"], ["red"], ["green"]]),
            "code": tf.constant([[5], [-1], [4], [7], [5], [3]], tf.int64),
            "zone": tf.constant([[12], [-1], [40], [7], [12], [-1]], tf.int64),
            "city": tf.constant(["a", "b", "", "a", "c", "d"]),
            "age": tf.constant([[15.0], [33.0], [47.0], [8.0], [21.0], [40.0]]),
            "pair": tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))}


def _both_ways(build):
    """(outputs, {variable: gradient}) of build(features) by TensorFlow's layers ("tf/") and the dense path
    ("dense/"), on the same random variable values; checks their variables' names and shapes agree."""
    results = {}
    with tf.Graph().as_default():
        features = _features()
        for scope in ("tf", "dense"):
            with tf.compat.v1.variable_scope(scope):
                output = build(features, scope == "dense")
            assert output is not None
            variables = {v.op.name[len(scope) + 1:]: v for v in tf.compat.v1.global_variables()
                         if v.op.name.startswith(scope + "/")}
            weighted = tf.reduce_sum(output * tf.range(1.0, 1.0 + output.shape[1]))
            gradients = tf.gradients(weighted, list(variables.values()))
            results[scope] = output, variables, dict(zip(variables, gradients))
        assert {n: v.shape for n, v in results["tf"][1].items()} == {n: v.shape for n, v in results["dense"][1].items()}
        rng = np.random.RandomState(0)
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.tables_initializer()])
            for name, variable in results["tf"][1].items():
                value = rng.normal(size=variable.shape).astype(np.float32)
                variable.load(value, session)
                results["dense"][1][name].load(value, session)
            got = session.run({scope: (out, grads) for scope, (out, _, grads) in results.items()})
    return got["tf"], got["dense"]


def _rows_touched(gradient):
    return sorted(set(gradient.indices.tolist())) if hasattr(gradient, "indices") else None


@pytest.mark.parametrize("layer", ["linear_model", "input_layer"])
def test_the_dense_path_gives_tensorflows_outputs_and_gradients(layer):
    linear, deep = _columns()

    def build(features, dense):
        if layer == "linear_model":
            return dense_columns.linear_model(features, linear, 2) if dense else \
                tf.compat.v1.feature_column.linear_model(features, linear, units=2)
        return dense_columns.input_layer(features, deep) if dense else \
            tf.compat.v1.feature_column.input_layer(features, deep)

    (tf_out, tf_grads), (dense_out, dense_grads) = _both_ways(build)
    np.testing.assert_allclose(dense_out, tf_out, rtol=1e-5, atol=1e-6)
    for name, gradient in tf_grads.items():
        dense = dense_grads[name]
        assert _rows_touched(dense) == _rows_touched(gradient), name  # the same rows updated, and no other
        np.testing.assert_allclose(_as_array(dense), _as_array(gradient), rtol=1e-5, atol=1e-6, err_msg=name)


def _as_array(gradient):
    if hasattr(gradient, "indices"):  # (IndexedSlicesValue)
        return tf.convert_to_tensor(tf.IndexedSlices(gradient.values, gradient.indices, gradient.dense_shape)).numpy()
    return gradient


def test_features_or_columns_it_does_not_cover_are_left_to_tensorflow():
    color = fc.categorical_column_with_vocabulary_list("color", WORDS)
    with tf.Graph().as_default():
        several = {"color": tf.constant([["red", "blue"], ["green", ""]])}
        sparse = {"color": tf.sparse.from_dense(tf.constant([["red"], ["blue"]]))}
        assert dense_columns.linear_model(several, [color], 1) is None
        assert dense_columns.linear_model(sparse, [color], 1) is None
        weighted = fc.weighted_categorical_column(color, "weight")
        assert dense_columns.linear_model({"color": tf.constant(["red"]), "weight": tf.constant([2.0])},
                                          [weighted], 1) is None
        assert dense_columns.input_layer({"color": tf.constant(["red"])},
                                         [fc.embedding_column(color, 2, max_norm=1.0)]) is None
        assert not tf.compat.v1.global_variables()  # (nothing made before it declined)


def test_a_premade_model_trains_to_the_same_weights_either_way(tmp_path, monkeypatch):
    """Adam on the embeddings and Ftrl on the linear weights (their state per row), with missing values:
    the dense path updates the rows TensorFlow's sparse path updated, by the same amounts."""
    linear, deep = _columns()
    features = {k: v.numpy() for k, v in _features().items()}
    labels = np.array([1, 0, 1, 1, 0, 0])

    def train(model_dir):
        est = canned.DNNLinearCombinedClassifier(
            model_dir=str(model_dir), linear_feature_columns=linear, dnn_feature_columns=deep,
            dnn_hidden_units=[4], dnn_optimizer="Adam", config=common.RunConfig(tf_random_seed=7))
        est.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(3).repeat(), steps=6)
        return {name: est.get_variable_value(name) for name in est.get_variable_names()}

    dense = train(tmp_path / "dense")
    monkeypatch.setattr(dense_columns, "input_layer", lambda *args: None)
    monkeypatch.setattr(dense_columns, "linear_model", lambda *args: None)
    sparse = train(tmp_path / "sparse")
    assert sorted(dense) == sorted(sparse)
    for name, value in sparse.items():
        np.testing.assert_allclose(dense[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
