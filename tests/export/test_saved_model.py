"""Serving receivers and the SavedModel write: named inputs, and no half-written export left behind."""

import os

import tensorflow as tf

import common
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
        export.write_saved_model(str(tmp_path), module, {"serving_default": lambda: None})
    except (TypeError, ValueError):
        pass
    else:
        raise AssertionError("a signature that is not a tf.function must fail the export")
    assert os.listdir(tmp_path) == []
