"""Keras layers and metrics built inside model_fn, as TF 2.x estimator code did."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.state import checkpoints
from common.variables import served as served_variables
from tests import models

FEATURES, LABELS = models.blobs(256)


def inline_fn(features, labels, mode, params):
    """models.classifier_fn's network, built on every call instead of through get_module,
    with Keras metric objects beside the project's accuracy."""
    net = keras.Sequential([keras.layers.Dense(8, activation="relu", name="hidden"),
                            keras.layers.BatchNormalization(name="bn"),
                            keras.layers.Dropout(params.get("dropout", 0.0)),
                            keras.layers.Dense(params.get("classes", 3), name="logits")], name="classifier")
    logits = net(features, training=mode == common.ModeKeys.TRAIN)
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    keras_accuracy = tf.keras.metrics.Accuracy()
    keras_accuracy.update_state(labels, predictions["classes"])
    auc = keras.metrics.AUC(name="auc")
    auc.update_state(tf.equal(labels, 0), predictions["probabilities"][:, 0])
    batch_loss = keras.metrics.Mean(name="batch_loss")
    batch_loss.update_state(loss)
    return common.EstimatorSpec(
        mode, predictions=predictions, loss=loss,
        optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.1, momentum=0.9)),
        eval_metric_ops={"accuracy": common.metrics.accuracy(labels, predictions["classes"]),
                         "keras_accuracy": keras_accuracy, "auc": auc, "batch_loss": batch_loss})


def estimator(fn, model_dir, params, towers=1, strategy="CPU", jit_compile=None):
    config = common.RunConfig(tf_random_seed=7, save_checkpoints_steps=5, jit_compile=jit_compile,
                              device_plan=models.plan(towers, strategy))
    return common.Estimator(fn, str(model_dir), params=params, config=config)


def weights(est, prefix):
    return {name[len(prefix):]: variable
            for name, variable in est.variable_values().items() if name.startswith(prefix)}


@pytest.mark.parametrize("towers,strategy,jit_compile", [(1, "CPU", None), (2, "CPU", None), (2, "GPU", True)])
def test_layers_built_in_model_fn_train_exactly_as_a_registered_module(tmp_path, towers, strategy, jit_compile):
    inline = estimator(inline_fn, tmp_path / "inline", {"dropout": 0.3}, towers, strategy, jit_compile)
    inline.train(models.train_input(FEATURES, LABELS, 32), steps=8)
    module = estimator(models.classifier_fn, tmp_path / "module",
                       {"hidden": 8, "batch_norm": True, "dropout": 0.3}, towers, strategy, jit_compile)
    module.train(models.train_input(FEATURES, LABELS, 32), steps=8)
    served, registered = weights(inline, "model_fn/"), weights(module, "net/")
    assert sorted(served) == sorted(registered) == [
        "classifier/bn/beta", "classifier/bn/gamma", "classifier/bn/moving_mean", "classifier/bn/moving_variance",
        "classifier/hidden/bias", "classifier/hidden/kernel", "classifier/logits/bias", "classifier/logits/kernel",
        "seed_generator/seed_generator_state"]
    for name in served:
        np.testing.assert_array_equal(served[name], registered[name], err_msg=name)
    assert not np.allclose(served["classifier/bn/moving_mean"], 0)  # the statistics moved, from every tower

    resumed = estimator(inline_fn, tmp_path / "inline", {"dropout": 0.3}, towers, strategy, jit_compile)
    results = resumed.evaluate(models.eval_input(FEATURES, LABELS, 64))
    assert results["global_step"] == 8
    for name, value in weights(resumed, "model_fn/").items():
        np.testing.assert_array_equal(value, served[name], err_msg=name)


def test_keras_metrics_stream_over_towers_and_batches_and_reset_per_evaluation(tmp_path):
    est = estimator(inline_fn, tmp_path, {}, towers=2)
    est.train(models.train_input(FEATURES, LABELS, 32), steps=5)
    first = est.evaluate(models.eval_input(FEATURES[:100], LABELS[:100], 24))  # last batch: 4, 2 per tower
    again = est.evaluate(models.eval_input(FEATURES[:100], LABELS[:100], 24))
    assert first == again
    assert first["keras_accuracy"] == pytest.approx(first["accuracy"])

    predicted = est.predict(models.eval_input(FEATURES[:100], LABELS[:100], 24))
    probabilities = np.stack([p["probabilities"] for p in predicted])
    auc = keras.metrics.AUC()
    auc.update_state(LABELS[:100] == 0, probabilities[:, 0])
    assert first["auc"] == pytest.approx(float(auc.result()), abs=1e-6)
    # a Keras Mean of the loss averages the towers' batch losses, not the examples:
    # 4 batches of 24 (12 per tower) and one of 4 (2 per tower) give 10 values
    per_example = -np.log(probabilities[np.arange(100), LABELS[:100]])
    tower_losses = [per_example[start:start + size].mean()
                    for batch in range(5) for start, size in _tower_slices(batch * 24, min(24, 100 - batch * 24))]
    assert first["batch_loss"] == pytest.approx(np.mean(tower_losses), rel=1e-5)
    batch_losses = [per_example[start:start + 24].mean() for start in range(0, 100, 24)]
    assert first["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)  # tf.estimator's: a mean of batch means


def _tower_slices(start, size):
    half = (size + 1) // 2
    return [(start, half), (start + half, size - half)]


def test_each_variable_is_created_once_whatever_the_mode(tmp_path):
    counted_fn, created = models.counting_variables(inline_fn)

    est = estimator(counted_fn, tmp_path, {}, towers=2)
    est.train(models.train_input(FEATURES, LABELS, 32), steps=2)
    est.evaluate(models.eval_input(FEATURES, LABELS, 64))
    after_first_eval = len(created)
    est.train(models.train_input(FEATURES, LABELS, 32), steps=2)
    models.evaluate_predict_export(est, FEATURES, LABELS, tmp_path / "export")
    assert len(created) == after_first_eval


def test_a_later_call_that_builds_another_structure_is_refused_by_name(tmp_path):
    def growing_fn(features, labels, mode):
        logits = keras.layers.Dense(3, name="logits")(features)
        if mode == common.ModeKeys.EVAL:
            logits = keras.layers.Dense(3, name="extra")(logits)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(keras.optimizers.SGD))

    est = common.Estimator(growing_fn, str(tmp_path))
    est.train(models.train_input(FEATURES, LABELS, 32), steps=1)
    with pytest.raises(common.VariableCreationError, match="'extra/kernel', which its first call did not create"):
        est.evaluate(models.eval_input(FEATURES, LABELS, 64))

    def resizing_fn(features, labels, mode):
        units = 3 if mode == common.ModeKeys.TRAIN else 4
        logits = keras.layers.Dense(units, name="logits")(features)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(keras.optimizers.SGD))

    est = common.Estimator(resizing_fn, str(tmp_path / "resizing"))
    est.train(models.train_input(FEATURES, LABELS, 32), steps=1)
    with pytest.raises(common.VariableCreationError, match=r"'logits/kernel' with shape \(4, 4\).*\(4, 3\)"):
        est.evaluate(models.eval_input(FEATURES, LABELS, 64))


def test_a_module_that_is_a_list_of_layers_still_trains_and_is_saved(tmp_path):
    def list_fn(features, labels, mode):
        layers = common.get_module("layers", lambda: [keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        logits = layers[1](layers[0](features))
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.5)))

    est = common.Estimator(list_fn, str(tmp_path), config=common.RunConfig(save_checkpoints_steps=20))
    before = est.evaluate(models.eval_input(FEATURES, LABELS, 64))["loss"]
    est.train(models.train_input(FEATURES, LABELS, 32), steps=20)
    assert est.evaluate(models.eval_input(FEATURES, LABELS, 64))["loss"] < before / 2
    saved = checkpoints.variable_shapes(tf.train.latest_checkpoint(str(tmp_path)))
    assert saved["model_fn/dense/kernel"] == [4, 8] and saved["model_fn/dense_1/kernel"] == [8, 3]


def test_a_trainable_variable_made_outside_model_fn_is_refused_by_name(tmp_path):
    outside = tf.Variable(tf.ones([4, 3]), name="made_outside")

    def capturing_fn(features, labels, mode):
        logits = tf.matmul(features, outside)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(keras.optimizers.SGD))

    est = common.Estimator(capturing_fn, str(tmp_path))
    with pytest.raises(ValueError, match="model_fn reads the trainable variable made_outside:0, made outside model_fn"):
        est.train(models.train_input(FEATURES, LABELS, 32), steps=1)
    assert not os.path.exists(tmp_path / "checkpoint")


def test_a_store_finds_the_key_of_the_variable_it_holds():
    store = served_variables.ServedVariables("model")
    kept, dropped = tf.Variable(1.0), tf.Variable(2.0)
    store.record("dense/kernel", kept)
    store.record("dense/bias", dropped)
    store.forget([dropped])
    assert store.key_of(kept) == "dense/kernel" and store.key_of(dropped) is None
    assert store.key_of(tf.Variable(1.0)) is None
