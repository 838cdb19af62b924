"""The estimator programs of tests/programs (TF 2.x era, and a TF1 tf.layers one),
upgraded by the command and trained here: the numbers are tf.estimator's (TensorFlow 2.15.1, tensorflow-estimator
2.15.0, Keras 2.15; recorded from the same files, unchanged, and kept in
tests/data/tf215_reference.json)."""

import json
import logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import common
from tests import DATA, models
from tests.programs import upgraded

with open(os.path.join(DATA, "tf215_reference.json")) as _f:
    REFERENCE = json.load(_f)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """Each program, upgraded by the command's rules (nothing refused, nothing edited by hand), imported."""
    folder = str(tmp_path_factory.mktemp("upgraded"))
    return {name: upgraded(name, folder) for name in (
        "tf2_sequential", "tf2_keras_model", "tf2_mirrored", "tf1_layers_cnn", "tf1_resnet_builder",
        "tf1_feature_columns")}


def _values(est):
    return est.variable_values()


def _assert_matches(ours, theirs, names):
    for our_name, their_name in names.items():
        np.testing.assert_allclose(ours[our_name], np.array(theirs[their_name]), rtol=2e-5, atol=2e-6,
                                   err_msg=f"{our_name} vs tf.estimator's {their_name}")


SEQUENTIAL_NAMES = {  # ours -> tf.estimator's checkpoint names
    "model_fn/sequential/dense/kernel": "dense/kernel", "model_fn/sequential/dense/bias": "dense/bias",
    "model_fn/sequential/batch_normalization/gamma": "batch_normalization/gamma",
    "model_fn/sequential/batch_normalization/beta": "batch_normalization/beta",
    "model_fn/sequential/dense_1/kernel": "dense_1/kernel", "model_fn/sequential/dense_1/bias": "dense_1/bias",
    "sequential/dense/kernel/Momentum": "dense/kernel/Momentum",  # TF1 slots, named after the Keras path
    "sequential/dense_1/kernel/Momentum": "dense_1/kernel/Momentum",
    "sequential/batch_normalization/gamma/Momentum": "batch_normalization/gamma/Momentum",
}


def test_the_sequential_program_trains_as_tf_estimator_trained_it(programs, tmp_path):
    program = programs["tf2_sequential"]
    est = program.main(str(tmp_path))  # train_and_evaluate, then the placeholder-receiver export
    ours, theirs = _values(est), REFERENCE["tf2_sequential"]["variables"]
    assert ours["global_step"] == 6
    _assert_matches(ours, theirs, SEQUENTIAL_NAMES)

    # tf.estimator never moved the batch-norm statistics (the train_op did not group model.updates):
    # with ours set back to 0 and 1, our weights give its eval results
    features, labels = program.blobs()
    hidden = np.maximum(features @ ours["model_fn/sequential/dense/kernel"] + ours["model_fn/sequential/dense/bias"], 0)
    normalized = hidden / np.sqrt(1 + 1e-3) * ours["model_fn/sequential/batch_normalization/gamma"] \
        + ours["model_fn/sequential/batch_normalization/beta"]
    logits = normalized @ ours["model_fn/sequential/dense_1/kernel"] + ours["model_fn/sequential/dense_1/bias"]
    assert np.mean(np.argmax(logits, 1) == labels) == REFERENCE["tf2_sequential"]["eval"]["accuracy"]
    assert not np.allclose(ours["model_fn/sequential/batch_normalization/moving_mean"], 0)  # ours moved

    export_dir = os.path.join(tmp_path, "export", os.listdir(os.path.join(tmp_path, "export"))[0])
    served = tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(features[:4]))
    predicted = [p["probabilities"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": features[:4]}).batch(4))]
    np.testing.assert_allclose(served["probabilities"].numpy(), predicted, rtol=1e-5)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_the_sequential_program_on_two_towers_learns_resumes_and_serves(programs, tmp_path, strategy):
    program = programs["tf2_sequential"]
    mode = common.ModeKeys

    def config():
        return common.RunConfig(tf_random_seed=1, save_checkpoints_steps=4, device_plan=models.plan(2, strategy))

    est = program.make_estimator(str(tmp_path), dropout=0.2, config=config())
    before = est.evaluate(lambda: program.input_fn(mode.EVAL))
    est.train(lambda: program.input_fn(mode.TRAIN), steps=8)
    after = est.evaluate(lambda: program.input_fn(mode.EVAL))
    assert after["loss"] < before["loss"] * 0.7 and after["accuracy"] > before["accuracy"]
    resumed = program.make_estimator(str(tmp_path), dropout=0.2, config=config())
    assert resumed.evaluate(lambda: program.input_fn(mode.EVAL)) == pytest.approx(after)
    resumed.train(lambda: program.input_fn(mode.TRAIN), steps=4)
    assert resumed.latest_checkpoint().endswith("model.ckpt-12")
    features, _ = program.blobs()
    export_dir = resumed.export_saved_model(str(tmp_path / "export"), program.serving_input_receiver_fn)
    served = tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(features[:6]))
    predicted = [p["classes"] for p in resumed.predict(lambda: program.input_fn(mode.PREDICT, batch_size=6))][:6]
    np.testing.assert_array_equal(served["classes"].numpy(), predicted)


KERAS_NAMES = {
    "keras_model/dense/kernel": "layer_with_weights-0/kernel", "keras_model/dense/bias": "layer_with_weights-0/bias",
    "keras_model/probabilities/kernel": "layer_with_weights-1/kernel",
    "keras_model/probabilities/bias": "layer_with_weights-1/bias",
    "optimizer/dense_kernel_momentum": "layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/momentum",
}


@pytest.mark.parametrize("towers,strategy", [(1, "CPU"), (2, "CPU"), (2, "GPU")])
def test_the_keras_model_program_trains_as_model_to_estimator_trained_it(programs, tmp_path, towers, strategy):
    program = programs["tf2_keras_model"]
    if towers == 1:
        est, results = program.main(str(tmp_path))
    else:
        est = program.make_estimator(str(tmp_path), config=common.RunConfig(device_plan=models.plan(towers, strategy)))
        est.train(lambda: program.input_fn(True), steps=8)
        results = est.evaluate(lambda: program.input_fn(False))
    reference = REFERENCE["tf2_keras_model"]
    assert results["global_step"] == 8 and results["accuracy"] == pytest.approx(reference["eval"]["accuracy"])
    assert results["loss"] == pytest.approx(reference["eval"]["loss"], rel=1e-5)
    _assert_matches(_values(est), reference["variables"], KERAS_NAMES)


MIRRORED_NAMES = {
    "model_fn/sequential/conv2d/kernel": "conv2d/kernel", "model_fn/sequential/conv2d/bias": "conv2d/bias",
    "model_fn/sequential/dense/kernel": "dense/kernel", "model_fn/sequential/dense/bias": "dense/bias",
}


@pytest.mark.parametrize("devices", [["/cpu:0", "/cpu:1"], ["/cpu:0"]])
def test_the_mirrored_program_trains_as_tf_estimator_under_the_strategy(programs, tmp_path, devices):
    """Under tf.estimator each replica took its own batch of 8 (16 examples a step on two) and the
    gradients were averaged; the weights after 10 steps are its, on one replica and on two."""
    program = programs["tf2_mirrored"]
    est = program.main(str(tmp_path), devices=devices)
    reference = REFERENCE["tf2_mirrored"][str(len(devices))]
    ours = _values(est)
    assert ours["global_step"] == 10
    _assert_matches(ours, reference["variables"], MIRRORED_NAMES)
    results = est.evaluate(lambda: program.input_fn(common.ModeKeys.EVAL))
    assert results["loss"] == pytest.approx(reference["eval"]["loss"], rel=1e-5)


TF1_CNN_NAMES = {name: name for name in (  # TF1 layers and slots: tf.estimator's names
    "conv2d/kernel", "conv2d/bias", "batch_normalization/gamma", "batch_normalization/beta",
    "batch_normalization/moving_mean", "batch_normalization/moving_variance", "logits/kernel", "logits/bias",
    "conv2d/kernel/Momentum", "logits/bias/Momentum")}


def test_the_tf1_layers_program_trains_as_tf_estimator_trained_it(programs, tmp_path):
    """tf.layers with fused batch norm, TF1 metrics and a scalar summary in model_fn, momentum through a
    learning-rate drop, a SessionRunHook that fetches "loss:0" and the global step and stops training."""
    est, seen, results = programs["tf1_layers_cnn"].main(str(tmp_path))
    reference = REFERENCE["tf1_layers_cnn"]
    assert [step for step, _ in seen] == [step for step, _ in reference["seen"]] == [0, 1, 2, 3, 4, 5]
    assert [loss for _, loss in seen] == pytest.approx([loss for _, loss in reference["seen"]], rel=2e-5)
    _assert_matches(_values(est), reference["variables"], TF1_CNN_NAMES)
    assert results["accuracy"] == reference["eval"]["accuracy"] and results["auc"] == reference["eval"]["auc"]
    assert results["loss"] == pytest.approx(reference["eval"]["loss"], rel=1e-5)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_the_tf1_layers_program_on_two_towers_learns_and_resumes(programs, tmp_path, strategy):
    program = programs["tf1_layers_cnn"]
    config = common.RunConfig(save_checkpoints_steps=3, device_plan=models.plan(2, strategy))
    est, seen, _ = program.main(str(tmp_path), config=config)
    assert [step for step, _ in seen] == [0, 1, 2, 3, 4, 5] and seen[-1][1] < seen[0][1]
    resumed, more, _ = program.main(str(tmp_path), config=config)
    assert [step for step, _ in more] == [6, 7, 8, 9, 10, 11]
    predicted = [p["probabilities"] for p in resumed.predict(lambda: program.input_fn(common.ModeKeys.PREDICT))]
    assert len(predicted) == 64
    export_dir = resumed.export_saved_model(str(tmp_path / "export"), program.serving_input_receiver_fn)
    pictures, _ = program.images()
    served = tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(pictures[:8]))
    np.testing.assert_allclose(served["probabilities"].numpy(), predicted[:8], rtol=1e-5)


def _tf1_names(ours, theirs):
    """Our variables that tf.estimator's checkpoint holds under the same name (TF1 layers', TF1 slots)."""
    return {name: name for name in ours if name in theirs}


def _logged(caplog, pattern):
    return [[float(x) for x in match] for match in re.findall(pattern, caplog.text)]


def test_the_resnet_builder_program_trains_as_tf_estimator_trained_it(programs, tmp_path, caplog):
    """An official-style builder class: weight decay over the trainable-variables collection, TF1 momentum
    through a drop, fused batch norm, a LoggingTensorHook of two tensors in the spec, a named export."""
    with caplog.at_level(logging.INFO):
        est, results, export_dir = programs["tf1_resnet_builder"].main(str(tmp_path))
    reference = REFERENCE["tf1_resnet_builder"]
    ours = _values(est)
    names = _tf1_names(ours, reference["variables"])
    assert len(names) == len(reference["variables"]) == 45  # every variable of its checkpoint, under its name
    _assert_matches(ours, reference["variables"], names)
    assert results["accuracy"] == reference["eval"]["accuracy"]
    assert results["loss"] == pytest.approx(reference["eval"]["loss"], rel=1e-5)
    logged = _logged(caplog, r"learning_rate = ([\d.e-]+), loss = ([\d.e-]+)")
    np.testing.assert_allclose(logged, [row[1:] for row in reference["logged"]], rtol=2e-5)  # steps 1, 3, 5
    signatures = tf.saved_model.load(export_dir).signatures
    assert sorted(signatures) == reference["signatures"]
    pictures, _ = programs["tf1_resnet_builder"].images()
    for key in reference["signatures"]:
        served = signatures[key](images=tf.constant(pictures[:4]))
        theirs = reference["served"][key]["outputs"]
        np.testing.assert_allclose(served["probabilities"].numpy(), theirs["probabilities"], rtol=2e-5)
        np.testing.assert_array_equal(served["classes"].numpy(), theirs["classes"])


def test_the_feature_column_program_trains_as_tf_estimator_trained_it(programs, tmp_path, caplog):
    """Numeric columns, Adagrad, a named softmax logged by name, a SessionRunHook fetching it and the
    training accuracy; TF1's accuracy there was the running mean of the batch accuracies ours gives."""
    with caplog.at_level(logging.INFO):
        est, seen, results = programs["tf1_feature_columns"].main(str(tmp_path))
    reference = REFERENCE["tf1_feature_columns"]
    ours = _values(est)
    names = _tf1_names(ours, reference["variables"])
    assert len(names) == len(reference["variables"]) == 9
    _assert_matches(ours, reference["variables"], names)
    assert results == pytest.approx(reference["eval"], rel=1e-6)
    np.testing.assert_allclose([row for row, _ in seen], [row for row, _ in reference["seen"]], rtol=2e-5)
    batch_accuracies = np.array([accuracy for _, accuracy in seen])
    running = np.cumsum(batch_accuracies) / np.arange(1, len(seen) + 1)
    np.testing.assert_allclose(running, [accuracy for _, accuracy in reference["seen"]], rtol=1e-6)
    logged = [np.array(_logged_rows(block)) for block in re.findall(r"probabilities = (\[\[.*?\]\])", caplog.text,
                                                                       re.S)]
    assert len(logged) == len(reference["logged"]) == 3  # steps 1, 3, 5
    for ours_logged, (_, theirs) in zip(logged, reference["logged"]):
        np.testing.assert_allclose(ours_logged, theirs, atol=2e-6)


def _logged_rows(block):
    return [[float(x) for x in row.split()] for row in re.findall(r"\[([^\[\]]+)\]", block)]


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_the_tf1_builder_and_feature_column_programs_on_two_towers_learn_resume_and_serve(programs, tmp_path,
                                                                                         strategy):
    config = common.RunConfig(save_checkpoints_steps=3, device_plan=models.plan(2, strategy))
    resnet = programs["tf1_resnet_builder"]
    before = common.Estimator(resnet.resnet_model_fn, str(tmp_path / "untrained"), params=resnet.PARAMS,
                              config=config).evaluate(lambda: resnet.input_fn(common.ModeKeys.EVAL))
    _, results, _ = resnet.main(str(tmp_path / "resnet"), config=config)
    assert results["loss"] < before["loss"] and results["global_step"] == 6
    est, resumed, export_dir = resnet.main(str(tmp_path / "resnet"), config=config)
    assert resumed["global_step"] == 12
    pictures, _ = resnet.images()
    served = tf.saved_model.load(export_dir).signatures["predict"](images=tf.constant(pictures[:8]))
    predicted = [p["probabilities"] for p in est.predict(lambda: resnet.input_fn(common.ModeKeys.PREDICT))][:8]
    np.testing.assert_allclose(served["probabilities"].numpy(), predicted, rtol=1e-5)

    flowers = programs["tf1_feature_columns"]
    est, seen, results = flowers.main(str(tmp_path / "flowers"), config=config)
    assert len(seen) == 5 and all(len(row) == 3 for row, _ in seen)
    est, _, resumed = flowers.main(str(tmp_path / "flowers"), config=config)
    assert resumed["global_step"] == 10 and resumed["loss"] < results["loss"]
    features, _ = flowers.flowers()
    predicted = [p["probabilities"] for p in est.predict(lambda: flowers.eval_input_fn())][:4]
    examples = [tf.train.Example(features=tf.train.Features(feature={
        key: tf.train.Feature(float_list=tf.train.FloatList(value=[features[key][i]])) for key in flowers.KEYS}))
        .SerializeToString() for i in range(4)]
    export_dir = est.export_saved_model(str(tmp_path / "flowers_export"), flowers.serving_input_receiver_fn)
    served = tf.saved_model.load(export_dir).signatures["serving_default"](examples=tf.constant(examples))
    np.testing.assert_allclose(served["probabilities"].numpy(), predicted, rtol=1e-5)
