"""model_to_estimator: a compiled Keras model trained on towers as Keras itself trains it."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from tests import models

FEATURES, LABELS = models.blobs(96)
RNG = np.random.RandomState(5)
HIDDEN = RNG.randn(4, 6).astype(np.float32) * 0.5
OUTPUT = RNG.randn(6, 3).astype(np.float32) * 0.5


def compiled_model():
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(6, activation="tanh", kernel_initializer=keras.initializers.Constant(HIDDEN),
                                kernel_regularizer=keras.regularizers.l2(0.01))(inputs)
    outputs = keras.layers.Dense(3, activation="softmax", name="probabilities",
                                 kernel_initializer=keras.initializers.Constant(OUTPUT))(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(0.2, momentum=0.5), "sparse_categorical_crossentropy",
                  metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")])
    return model


def input_fn(training):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
    return (dataset.repeat() if training else dataset).batch(12)


@pytest.mark.parametrize("towers,strategy", [(1, "CPU"), (2, "GPU")])
def test_it_trains_and_evaluates_as_keras_fit_and_evaluate(tmp_path, towers, strategy):
    est = common.model_to_estimator(keras_model=compiled_model(), model_dir=str(tmp_path),
                                    config=common.RunConfig(device_plan=models.plan(towers, strategy)))
    est.train(lambda: input_fn(True), steps=8)
    results = est.evaluate(lambda: input_fn(False))

    reference = compiled_model()
    reference.fit(FEATURES, LABELS, batch_size=12, epochs=1, shuffle=False, verbose=0)
    loss, accuracy, top2 = reference.evaluate(FEATURES, LABELS, batch_size=12, verbose=0)
    trained = [v for n, v in est.variable_values().items() if n != "global_step" and not n.startswith("optimizer/")]
    assert len(trained) == len(reference.weights) == 4
    for value, variable in zip(trained, reference.weights):
        np.testing.assert_allclose(value, variable.numpy(), rtol=1e-5, atol=1e-6, err_msg=variable.path)
    assert results["accuracy"] == pytest.approx(accuracy) and results["top2"] == pytest.approx(top2)
    assert results["loss"] == pytest.approx(loss, rel=1e-5)  # every batch full: the means agree

    predictions = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": FEATURES[:5]}).batch(5)))
    np.testing.assert_allclose([p["probabilities"] for p in predictions], reference.predict(FEATURES[:5], verbose=0),
                               rtol=1e-5)
    resumed = common.model_to_estimator(keras_model=compiled_model(), model_dir=str(tmp_path))
    assert resumed.evaluate(lambda: input_fn(False)) == pytest.approx(results)


def test_an_uncompiled_model_is_refused_by_name(tmp_path):
    model = keras.Sequential([keras.layers.Dense(1)], name="bare")
    with pytest.raises(ValueError, match="the Keras model 'bare' is not compiled"):
        common.model_to_estimator(keras_model=model, model_dir=str(tmp_path))


def test_a_sequential_with_dropout_trains_and_predicts_as_the_model_without_dropout_at_inference(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"), keras.layers.Dropout(0.2),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy")
    est = common.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(12), steps=3)
    assert est.get_variable_value("global_step") == 3
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(FEATURES[:4]).batch(4)))
    assert len(rows) == 4 and all(np.isclose(sum(next(iter(r.values()))), 1.0, atol=1e-5) for r in rows)


def test_a_tf1_optimizer_in_compile_trains_as_keras_2_wrapped_it_and_metrics_keep_their_compiled_names(tmp_path):
    x = RNG.randn(16, 4).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 1.0).astype(np.float32)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=common.tf1.train.GradientDescentOptimizer(0.1), loss="mse", metrics=["mae"])
    with pytest.raises(NotImplementedError, match="a TF1 optimizer trains a Keras model through model_to_estimator"):
        model.fit(x, y, verbose=0)
    est = common.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=1)
    gradient = 2 * x.T @ (x @ np.zeros((4, 1)) + 0 - y) / len(x)  # mse's gradient at the zero kernel and bias
    trained = {n: v for n, v in est.variable_values().items() if v.shape == (4, 1)}
    (kernel,) = trained.values()
    np.testing.assert_allclose(kernel, -0.1 * gradient, rtol=1e-5)
    results = est.evaluate(lambda: tf.data.Dataset.from_tensors((x, y)))
    predicted = next(est.predict(lambda: tf.data.Dataset.from_tensors(x), yield_single_examples=False))
    assert list(predicted) == ["dense"]  # Keras 2 keyed a Sequential's output by its last layer's name
    assert sorted(results) == ["global_step", "loss", "mae"]
    assert results["mae"] == pytest.approx(np.abs(predicted["dense"] - y).mean(), rel=1e-5)
