"""tf.estimator.add_metrics: a metric_fn's metrics join a trained estimator's evaluation; forward_features: a
feature joins its predictions and served outputs."""

import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.canned import LinearRegressor
from common.tf1 import metrics as tf1_metrics

RNG = np.random.RandomState(3)
X = RNG.randn(24, 2).astype(np.float32)
Y = (X @ [1.5, -2.0] + 0.3 + 0.1 * RNG.randn(24)).astype(np.float32)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(8)


def test_a_premade_regressor_reports_the_rmse_its_metric_fn_adds_and_trains_on_in_the_same_model_dir(tmp_path):
    regressor = LinearRegressor([tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path))
    regressor.train(lambda: input_fn().repeat(), steps=20)
    seen = {}

    def rmse_fn(labels, predictions, features, config):
        seen["args"] = (sorted(features), config.model_dir)
        return {"rmse": tf1_metrics.root_mean_squared_error(labels, predictions["predictions"])}

    with_rmse = common.add_metrics(regressor, rmse_fn)
    results = with_rmse.evaluate(input_fn)
    plain = regressor.evaluate(input_fn)
    assert "rmse" not in plain and seen["args"] == (["x"], str(tmp_path))
    assert results["global_step"] == plain["global_step"] == 20
    assert results["rmse"] == pytest.approx(np.sqrt(plain["average_loss"]), rel=1e-5)  # the same model's squares
    assert results["average_loss"] == pytest.approx(plain["average_loss"])
    with_rmse.train(lambda: input_fn().repeat(), steps=5)
    assert regressor.get_variable_value("global_step") == 25


def test_a_metric_fn_asking_for_an_unknown_argument_is_refused_by_name():
    estimator = common.Estimator(lambda features, labels, mode: None)
    with pytest.raises(ValueError, match=r"has following not expected args: \['mode'\]"):
        common.add_metrics(estimator, lambda predictions, mode: {})


def test_a_metric_fn_returning_a_tuple_is_named_with_the_type_and_the_model_dir_is_untouched(tmp_path):
    regressor = LinearRegressor([tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path))
    regressor.train(lambda: input_fn().repeat(), steps=2)
    before = sorted(os.listdir(tmp_path))

    def pair_fn(labels, predictions):
        return tf1_metrics.mean(labels), tf1_metrics.mean(predictions["predictions"])

    with pytest.raises(TypeError, match=r"metric_fn \(pair_fn\) returned a tuple; it must return a dict"):
        common.add_metrics(regressor, pair_fn).evaluate(input_fn)
    assert sorted(os.listdir(tmp_path)) == before


def test_a_keras_metric_given_a_tensor_of_unknown_rank_names_metric_fn_and_the_fix(tmp_path):
    """Keras 2's AUC took tf.squeeze(one_hot(labels)) over a batch of unknown size; Keras 3's needs the rank."""
    regressor = LinearRegressor([tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path))
    regressor.train(lambda: input_fn().repeat(), steps=2)
    before = sorted(os.listdir(tmp_path))

    def auc_fn(labels, predictions):
        auc = tf.keras.metrics.AUC()
        one_hot = tf.squeeze(tf.one_hot(tf.cast(labels > 0, tf.int32), 2))  # (no axis: unknown rank)
        auc.update_state(one_hot, tf.sigmoid(predictions["predictions"]))
        return {"auc": auc}

    with pytest.raises(ValueError, match=r"metric_fn \(auc_fn\) gave a Keras metric a tensor of unknown rank .*"
                                         r"tf.squeeze\(t, axis=1\)"):
        common.add_metrics(regressor, auc_fn).evaluate(input_fn)
    assert sorted(os.listdir(tmp_path)) == before


def keyed_input_fn():
    keys = np.array([f"k{i}" for i in range(24)])
    return tf.data.Dataset.from_tensor_slices(({"x": X, "key": keys}, Y)).batch(8)


def test_forward_features_passes_a_key_to_the_predictions_and_the_served_outputs(tmp_path):
    regressor = LinearRegressor([tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path))
    regressor.train(lambda: keyed_input_fn().repeat(), steps=5)
    forwarding = common.forward_features(regressor, "key")
    predicted = list(forwarding.predict(keyed_input_fn))
    plain = list(regressor.predict(keyed_input_fn))
    assert [p["key"] for p in predicted] == [f"k{i}".encode() for i in range(24)]
    np.testing.assert_allclose([p["predictions"] for p in predicted], [p["predictions"] for p in plain])

    def receiver():
        received = {"x": tf.compat.v1.placeholder(tf.float32, [None, 2]), "key": tf.compat.v1.placeholder(tf.string,
                                                                                                        [None])}
        return common.ServingInputReceiver(received, received)

    served = tf.saved_model.load(forwarding.export_saved_model(str(tmp_path / "export"), receiver))
    outputs = served.signatures["predict"](x=tf.constant(X[:2]), key=tf.constant(["a", "b"]))
    assert outputs["key"].numpy().tolist() == [b"a", b"b"] and outputs["predictions"].shape == (2, 1)
    with pytest.raises(ValueError, match=r"Cannot forward feature key \(predictions\)"):
        next(common.forward_features(regressor).predict(
            lambda: tf.data.Dataset.from_tensor_slices({"x": X, "predictions": X}).batch(8)))
