"""Keras 2's DenseFeatures as a Keras 3 layer: its numbers and variable names as TF 2.15's, eagerly, in a Keras
model, and inside model_fn on two towers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.layers import DenseFeatures
from tests import models

fc = tf.feature_column


def _columns():
    occupation = fc.categorical_column_with_vocabulary_list("occ", ["a", "b", "c"])
    return [fc.numeric_column("age"), fc.embedding_column(occupation, 2, initializer=tf.constant_initializer(0.5)),
            fc.indicator_column(fc.categorical_column_with_hash_bucket("h", 4)),
            fc.bucketized_column(fc.numeric_column("x"), [0.0, 1.0])]


FEATURES = {"age": [[1.0], [2.0]], "occ": [["a"], ["c"]], "h": [["q"], ["r"]], "x": [[0.5], [3.0]]}


def _examples():
    """16 examples of FEATURES' two rows, labelled 1 and -1."""
    x = {k: np.array(v * 8) if k in ("occ", "h") else np.array(v * 8, np.float32) for k, v in FEATURES.items()}
    return x, np.array([1.0, -1.0] * 8, np.float32)


def test_the_output_and_variable_names_are_keras_2s():
    """tf.keras.layers.DenseFeatures of TF 2.15 (Keras 2.15) on the same columns and features gave these."""
    layer = DenseFeatures(_columns())
    np.testing.assert_array_equal(layer({k: tf.constant(v) for k, v in FEATURES.items()}).numpy(), [
        [1, 0, 1, 0, 0, 0.5, 0.5, 0, 1, 0],
        [2, 0, 1, 0, 0, 0.5, 0.5, 0, 0, 1]])
    assert [w.path for w in layer.weights] == ["dense_features/occ_embedding/embedding_weights"]
    assert layer.compute_output_shape(None) == (None, 10)


def test_a_categorical_column_must_be_wrapped():
    with pytest.raises(ValueError, match="Items of feature_columns must be a DenseColumn. You can wrap a "
                                         "categorical column with an embedding_column or indicator_column"):
        DenseFeatures([fc.categorical_column_with_hash_bucket("h", 4)])


def test_a_keras_model_on_it_fits():
    inputs = {"age": keras.Input((1,), name="age"), "occ": keras.Input((1,), dtype="string", name="occ"),
              "h": keras.Input((1,), dtype="string", name="h"), "x": keras.Input((1,), name="x")}
    outputs = keras.layers.Dense(1, kernel_initializer="zeros")(DenseFeatures(_columns())(inputs))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    data = tf.data.Dataset.from_tensor_slices(_examples()).batch(4)
    history = model.fit(data, epochs=5, verbose=0).history["loss"]
    assert history[-1] < 0.5 * history[0]
    embedding = model.get_layer("dense_features").weights[0].numpy()
    assert not np.allclose(embedding, 0.5)  # the embedding trains too


def _model_fn(features, labels, mode):
    hidden = DenseFeatures(_columns())(features)
    logits = common.get_module("logits", lambda: keras.layers.Dense(1, name="logits"))(hidden)
    loss = tf.reduce_mean(tf.square(logits[:, 0] - labels))
    return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.05)))


def test_inside_model_fn_on_two_towers_it_trains_and_checkpoints_under_keras_2s_name(tmp_path):
    x, y = _examples()
    est = common.Estimator(_model_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    before = est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(), steps=1).evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8), steps=2)["loss"]
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(), steps=30)
    after = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8), steps=2)["loss"]
    assert after < 0.5 * before
    names = tf.train.list_variables(est.latest_checkpoint())
    assert any(name.endswith("dense_features/occ_embedding/embedding_weights") for name, _ in names), names
