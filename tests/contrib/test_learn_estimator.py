"""tf.contrib.learn's own Estimator on this project's: contrib's data feeder's batches, model_fns of contrib's
signatures and returns, fit / evaluate / predict, SKCompat, and an Experiment over it."""

import numpy as np
import pytest
import tensorflow as tf

import common
import common.contrib.layers
import common.contrib.losses
from common.contrib import learn
from common.contrib.learn_estimator import input_fn_of
from common.tf1 import train as tf1_train

X = np.linspace(-1, 1, 12).reshape(12, 1)  # float64, as numpy makes it
Y = 2 * X[:, 0] + 1


def test_numpy_input_is_read_as_contribs_data_feeder_read_it():
    shuffled = list(input_fn_of(np.arange(10.0), np.arange(10), None, 4, shuffle=True, epochs=2)()
                    .as_numpy_iterator())
    rng = np.random.RandomState(42)  # the feeder's generator: a permutation an epoch
    first, second = rng.permutation(10), rng.permutation(10)
    assert [batch[1].tolist() for batch in shuffled] == [
        first[:4].tolist(), first[4:8].tolist(), first[8:].tolist(),
        second[:4].tolist(), second[4:8].tolist(), second[8:].tolist()]
    features, _ = shuffled[0]
    assert features.shape == (4, 1) and features.dtype == np.float32  # a 1-D x is one column, float64 float32
    whole = list(input_fn_of({"a": np.ones((5, 2))}, None, None, None, shuffle=False, epochs=1)().as_numpy_iterator())
    assert len(whole) == 1 and whole[0]["a"].shape == (5, 2)  # no batch_size: the whole set at once
    with pytest.raises(ValueError, match="Can not provide both input_fn and x or y"):
        input_fn_of(X, Y, lambda: None, None, True, None)
    with pytest.raises(ValueError, match="x has 12 rows and y 3"):
        input_fn_of(X, Y[:3], None, None, True, None)


def regression(feature, target, mode):  # contrib's (features, targets, mode) -> (predictions, loss, train_op)
    weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    bias = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = (tf.matmul(feature, weight) + bias)[:, 0]
    if mode == learn.ModeKeys.INFER:
        return predictions, None, None
    loss = tf.reduce_mean(tf.square(predictions - tf.cast(target, tf.float32)))
    return predictions, loss, tf1_train.GradientDescentOptimizer(0.3).minimize(loss, common.get_global_step())


def test_fit_evaluate_and_predict_on_arrays_with_a_model_fn_of_contribs_form(tmp_path):
    estimator = learn.Estimator(model_fn=regression, model_dir=str(tmp_path))
    assert estimator.fit(x=X, y=Y, batch_size=4, steps=150) is estimator
    results = estimator.evaluate(x=X, y=Y)
    assert results["loss"] < 1e-3 and results["global_step"] == 150
    predicted = estimator.predict(x=X, as_iterable=False)
    np.testing.assert_allclose(predicted, Y, atol=0.05)
    assert [float(p) for p in estimator.predict(x=X[:2])] == pytest.approx(predicted[:2].tolist())
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        estimator.fit(x=X, y=Y, steps=1, max_steps=2)
    with pytest.raises(NotImplementedError, match="return the metrics from model_fn"):
        estimator.evaluate(x=X, y=Y, metrics={"mae": tf.compat.v1.metrics.mean_absolute_error})
    with pytest.raises(ValueError, match="has less than 4 arguments, but not None params"):
        learn.Estimator(model_fn=regression, params={"lr": 0.1})


def test_model_fn_ops_and_params_and_skcompat_give_dicts_as_contrib_did(tmp_path):
    def model_fn(features, labels, mode, params):
        spec = regression(features["x"], labels, mode)
        metrics = None if mode != learn.ModeKeys.EVAL else {
            "mae": common.tf1.metrics.mean_absolute_error(tf.cast(labels, tf.float32), spec[0])}
        return learn.ModelFnOps(mode, predictions={"value": spec[0], "twice": 2 * spec[0]}, loss=spec[1],
                                train_op=spec[2], eval_metric_ops=metrics)

    model = learn.SKCompat(learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path), params={"unused": 1}))
    model.fit({"x": X}, Y, steps=100)
    scores = model.score({"x": X}, Y)
    assert scores["mae"] < 0.05 and scores["global_step"] == 100
    predicted = model.predict({"x": X}, batch_size=5)  # batches of 5, 5, 2, concatenated
    assert set(predicted) == {"value", "twice"} and predicted["value"].shape == (12,)
    np.testing.assert_allclose(predicted["twice"], 2 * predicted["value"], rtol=1e-6)


def test_a_plain_tensor_metric_is_its_mean_over_the_batches_in_every_mode(tmp_path):
    def model_fn(features, targets, mode):  # (tensorflow-without-a-phd's contrib.metrics.accuracy: a tensor)
        predictions, loss, train_op = regression(features, targets, mode)
        mean_target = tf.reduce_mean(tf.cast(targets, tf.float32))
        return learn.ModelFnOps(mode, predictions, loss, train_op, eval_metric_ops={"mean_target": mean_target})

    estimator = learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    estimator.fit(x=X, y=Y, batch_size=4, steps=2)
    batch_means = [Y[:5].mean(), Y[5:10].mean(), Y[10:].mean()]  # (batches of 5, 5, 2)
    results = estimator.evaluate(x=X, y=Y, batch_size=5)
    assert results["mean_target"] == pytest.approx(np.mean(batch_means), rel=1e-5)
    assert np.mean(batch_means) != pytest.approx(Y.mean(), rel=1e-3)  # (not the mean over the examples)


def test_an_experiment_trains_and_evaluates_a_contrib_estimator(tmp_path):
    estimator = learn.Estimator(model_fn=regression, model_dir=str(tmp_path))
    experiment = learn.Experiment(estimator, train_input_fn=input_fn_of(X, Y, None, 4, True, None),
                                  eval_input_fn=input_fn_of(X, Y, None, None, False, 1), train_steps=60,
                                  eval_steps=None)
    metrics, _ = experiment.train_and_evaluate()
    assert metrics["global_step"] == 60 and metrics["loss"] < 0.05


def test_predict_gives_a_model_fn_that_builds_its_loss_in_every_mode_labels_of_the_trained_kind(tmp_path):
    def model_fn(features, targets, mode, params):  # as TensorFlow's abalone tutorial wrote it
        predictions = tf.reshape(common.contrib.layers.linear(features, 1), [-1])
        loss = common.contrib.losses.mean_squared_error(predictions, targets)
        train_op = common.contrib.layers.optimize_loss(loss=loss, global_step=common.get_global_step(),
                                                    learning_rate=params["learning_rate"], optimizer="SGD")
        return {"ages": predictions}, loss, train_op

    estimator = learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path), params={"learning_rate": 0.5})
    estimator.fit(x=X, y=Y, steps=100)
    assert estimator.evaluate(x=X, y=Y, steps=1)["loss"] < 1e-3
    ages = [p["ages"] for p in estimator.predict(x=X[:3], as_iterable=True)]
    np.testing.assert_allclose(ages, Y[:3], atol=0.05)
    with pytest.raises(ValueError, match="labels"):  # a fresh estimator has no trained labels, as in TF1
        list(learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path), params={"learning_rate": 0.5})
             .predict(x=X[:3]))
