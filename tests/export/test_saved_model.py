"""Serving receivers and the SavedModel write: named inputs, and no half-written export left behind."""

import os

import pytest
import tensorflow as tf

import common
import common.tf1.train
from common.export import receivers
from common.export import saved_model as export


def test_a_single_spec_receiver_serves_the_tensor_under_the_spec_name():
    inputs = receivers.serving_inputs(
        common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 3], tf.float32, name="image")))
    assert list(inputs) == ["serving_default"]
    assert list(inputs["serving_default"].specs) == ["image"]
    features = tf.constant([[1.0, 2.0, 3.0]])
    assert inputs["serving_default"].features_fn({"image": features}) is features  # the tensor, as in training
    unnamed = receivers.serving_inputs(common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 3])))
    assert list(unnamed["serving_default"].specs) == ["features"]


def test_temp_folders_of_killed_exports_are_removed_and_a_live_ones_kept(tmp_path):
    dead_pid = 2 ** 22 + 12345  # above Linux's pid_max: no such process
    for name in ("temp-100", f"temp-101-{dead_pid}", f"temp-102-{os.getpid()}", "1700000000"):
        os.makedirs(tmp_path / name / "variables")
    export.remove_stale_temp_exports(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["1700000000", f"temp-102-{os.getpid()}"]


def test_an_export_that_fails_leaves_nothing_under_the_base(tmp_path):
    class Unsaveable(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def serve(self, x):
            return {"y": x}

    module = Unsaveable()
    try:
        export.write_saved_model(str(tmp_path), module, export.ExportFunctions({"serving_default": lambda: None}))
    except (TypeError, ValueError):
        pass
    else:
        raise AssertionError("a signature that is not a tf.function must fail the export")
    assert os.listdir(tmp_path) == []


def _vocabulary_fn(features, labels, mode):
    """A model whose features pass through a vocabulary lookup table made in model_fn, as feature columns'
    categorical_column_with_vocabulary_list does."""
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["red", "green", "blue"], [0, 1, 2], value_dtype=tf.int64), -1)
    weights = tf.compat.v1.get_variable("weights", [3], initializer=tf.compat.v1.constant_initializer([1., 2., 3.]))
    ids = table.lookup(features["color"])
    score = tf.where(ids >= 0, tf.gather(weights, tf.maximum(ids, 0)), 0.0)
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"score": score})
    loss = tf.reduce_mean(tf.square(score - labels))
    return common.EstimatorSpec(mode, loss=loss,
                                train_op=common.tf1.train.GradientDescentOptimizer(0.0).minimize(loss))


def test_a_model_with_a_lookup_table_exports_and_serves_it(tmp_path):
    est = common.Estimator(_vocabulary_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(({"color": ["red", "blue"]}, [0.0, 0.0])).repeat(), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn({"color": tf.TensorSpec([None], tf.string)})
    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    served = tf.saved_model.load(path).signatures["serving_default"]
    scores = served(color=tf.constant(["blue", "purple", "green"]))["score"].numpy()
    assert list(scores) == [3.0, 0.0, 2.0]


def test_resources_made_collects_the_tables_made_inside():
    with export.resources_made() as made:
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), 0)
    assert made == [table]


def _doubling_fn(features, labels, mode):
    """predictions one tensor, no export_outputs: tf.estimator served it as PredictOutput's "output"."""
    scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.constant_initializer(2.0))
    predictions = features * scale
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(tf.square(predictions - labels))
    return common.EstimatorSpec(mode, loss=loss,
                                train_op=common.tf1.train.GradientDescentOptimizer(0.0).minimize(loss))


def test_a_single_prediction_tensor_is_served_as_output_as_tf_estimator_did(tmp_path):
    est = common.Estimator(_doubling_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(([1.0], [0.0])).repeat(), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None], tf.float32, name="number"))
    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    outputs = tf.saved_model.load(path).signatures["serving_default"](number=tf.constant([100.0, 105.0]))
    assert list(outputs) == ["output"]
    assert list(outputs["output"].numpy()) == [200.0, 210.0]


def test_as_text_writes_the_text_saved_model_and_assets_extra_are_copied_as_tf_estimator_did(tmp_path):
    est = common.Estimator(_doubling_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(([1.0], [0.0])).repeat(), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None], tf.float32, name="number"))
    extra = tmp_path / "notes.txt"
    extra.write_text("kept beside the model")
    path = est.export_saved_model(str(tmp_path / "export"), receiver, as_text=True,
                                  assets_extra={"docs/notes.txt": str(extra)})
    assert {"assets.extra", "saved_model.pbtxt", "variables"} <= set(os.listdir(path))
    assert "saved_model.pb" not in os.listdir(path)
    assert (tmp_path / "export" / os.path.basename(path) / "assets.extra" / "docs" / "notes.txt").read_text() == \
        "kept beside the model"
    served = tf.saved_model.load(path).signatures["serving_default"](number=tf.constant([4.0]))
    assert served["output"].numpy().tolist() == [8.0]
    with pytest.raises(ValueError, match="assets_extra destination '../x' must be a relative path"):
        est.export_saved_model(str(tmp_path / "export"), receiver, assets_extra={"../x": str(extra)})


def test_tf1s_export_savedmodel_exports_and_unsupported_options_are_refused_by_name(tmp_path):
    est = common.Estimator(_doubling_fn, str(tmp_path / "model"))
    est.train(lambda: tf.data.Dataset.from_tensors(([1.0], [0.0])).repeat(), steps=1)
    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None], tf.float32, name="number"))
    path = est.export_savedmodel(str(tmp_path / "export"), receiver, strip_default_attrs=True)
    assert tf.saved_model.load(path).signatures["serving_default"](number=tf.constant([1.5]))["output"].numpy() == [3.0]
    with pytest.raises(TypeError, match="export_saved_model: as_text must be True or False, got 'yes'"):
        est.export_saved_model(str(tmp_path / "export"), receiver, as_text="yes")
    with pytest.raises(ValueError, match="assets_extra source '/no/such/file' .for 'vocab.txt'. does not exist"):
        est.export_saved_model(str(tmp_path / "export"), receiver, assets_extra={"vocab.txt": "/no/such/file"})
    with pytest.raises(NotImplementedError, match="experimental_mode='train' is not supported"):
        est.export_saved_model(str(tmp_path / "export"), receiver, experimental_mode=common.ModeKeys.TRAIN)
    assert os.listdir(tmp_path / "export") == [os.path.basename(path)]
