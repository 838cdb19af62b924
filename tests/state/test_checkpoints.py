"""Checkpoints by stable name: reading, the different-model check, all-or-nothing restore, resolving a path."""

import re

import numpy as np
import pytest
import tensorflow as tf

import common
from common.state import checkpoints
from common.state.checkpoint_store import CheckpointStore
from tests.state import MODEL_NAMES, model_variables, save, values


def test_variable_shapes_and_read_variable_speak_the_stable_names(tmp_path):
    variables = model_variables(scale=3.0)
    variables["net/block.v2/w"] = tf.Variable([1.5, -1.5])  # dots and slashes survive TF's key escaping
    path = save(tmp_path, 7, variables)
    assert checkpoints.variable_shapes(path) == {
        "global_step": [], "net/dense/kernel": [2, 3], "net/dense/bias": [3],
        "optimizer/momentum": [2, 3], "net/block.v2/w": [2]}
    np.testing.assert_array_equal(checkpoints.read_variable(path, "net/dense/kernel"), np.full([2, 3], 3.0))
    np.testing.assert_array_equal(checkpoints.read_variable(path, "net/block.v2/w"), [1.5, -1.5])
    assert checkpoints.read_variable(path, "global_step") == 7


def test_global_step_in_a_model_dir_is_its_newest_checkpoints_or_0(tmp_path):
    assert checkpoints.global_step_in(str(tmp_path)) == 0
    variables = model_variables()
    save(tmp_path, 3, variables)
    save(tmp_path, 12, variables)
    assert checkpoints.global_step_in(str(tmp_path)) == 12


def test_read_variable_of_an_unknown_name_lists_what_the_checkpoint_holds(tmp_path):
    path = save(tmp_path, 1, model_variables())
    with pytest.raises(ValueError) as error:
        checkpoints.read_variable(path, "net/dense/kernal")
    assert str(error.value) == (
        f"no variable 'net/dense/kernal' in checkpoint {path}; it holds: "
        "global_step, net/dense/bias, net/dense/kernel, optimizer/momentum")


def test_check_compatible_accepts_the_same_model_without_optimizer_state(tmp_path):
    path = save(tmp_path, 1, model_variables())
    checkpoints.check_compatible(path, model_variables(), list(model_variables()))
    # Evaluation asks only for the model: the checkpoint's optimizer state is not "extra".
    model_only = {name: model_variables()[name] for name in MODEL_NAMES}
    checkpoints.check_compatible(path, model_only, MODEL_NAMES)
    # A checkpoint written before the optimizer existed still serves a model that has one.
    early = CheckpointStore(str(tmp_path / "early")).save(
        1, {name: model_variables()[name] for name in MODEL_NAMES})
    checkpoints.check_compatible(early, model_variables(), MODEL_NAMES)


def test_check_compatible_names_missing_variables(tmp_path):
    path = save(tmp_path, 1, model_variables())
    variables = model_variables()
    variables["net/head/kernel"] = tf.Variable(tf.zeros([3, 1]))
    with pytest.raises(common.CheckpointMismatchError) as error:
        checkpoints.check_compatible(path, variables, list(variables))
    message = str(error.value)
    assert f"checkpoint {path} was written by a different model" in message
    assert "not in the checkpoint: net/head/kernel." in message
    assert "shapes differ" not in message and "not in the model" not in message
    assert "Use another model_dir, or remove it to start over." in message


def test_check_compatible_names_extra_variables(tmp_path):
    variables = model_variables()
    variables["old/head/kernel"] = tf.Variable(tf.zeros([3, 1]))
    path = save(tmp_path, 1, variables)
    with pytest.raises(common.CheckpointMismatchError, match="in the checkpoint but not in the model: old/head/kernel"):
        checkpoints.check_compatible(path, model_variables(), list(model_variables()))


def test_a_checkpoint_with_tf_estimators_early_stopping_flag_serves_the_model_it_was_saved_from(tmp_path):
    variables = model_variables()
    variables["signal_early_stopping/STOP"] = tf.Variable(False)  # TF 2.15's stop_if_* hooks saved it
    path = save(tmp_path, 1, variables)
    checkpoints.check_compatible(path, model_variables(), list(model_variables()))


def test_check_compatible_names_reshaped_variables_with_both_shapes(tmp_path):
    path = save(tmp_path, 1, model_variables(kernel_shape=(2, 3)))
    wider = model_variables(kernel_shape=(2, 4))
    with pytest.raises(common.CheckpointMismatchError) as error:
        checkpoints.check_compatible(path, wider, list(wider))
    message = str(error.value)
    assert ("shapes differ: net/dense/bias (checkpoint [3], model [4]), net/dense/kernel (checkpoint [2, 3], "
            "model [2, 4]), optimizer/momentum (checkpoint [2, 3], model [2, 4])") in message
    assert isinstance(error.value, ValueError)


def test_check_compatible_lists_only_ten_names(tmp_path):
    path = save(tmp_path, 1, model_variables())
    variables = model_variables()
    variables.update({f"net/new{i:02d}/w": tf.Variable(0.0) for i in range(13)})
    with pytest.raises(common.CheckpointMismatchError) as error:
        checkpoints.check_compatible(path, variables, list(variables))
    message = str(error.value)
    assert "net/new09/w and 3 more" in message and "net/new10/w" not in message


def test_restore_assigns_the_saved_values(tmp_path):
    path = save(tmp_path, 9, model_variables(scale=5.0))
    variables = model_variables(scale=1.0)
    checkpoints.restore(path, variables, list(variables))
    assert int(variables["global_step"].numpy()) == 9
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.full([2, 3], 5.0))
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 10.0))
    np.testing.assert_array_equal(variables["optimizer/momentum"].numpy(), np.full([2, 3], -5.0))


def test_restore_of_only_some_names_leaves_the_rest(tmp_path):
    path = save(tmp_path, 9, model_variables(scale=5.0))
    variables = model_variables(scale=1.0)
    checkpoints.restore(path, variables, ["global_step"] + MODEL_NAMES)
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.full([2, 3], 5.0))
    np.testing.assert_array_equal(variables["optimizer/momentum"].numpy(), np.full([2, 3], -1.0))


def test_restore_assigns_nothing_when_the_check_fails(tmp_path):
    saved = model_variables(scale=5.0)
    saved["net/dense/other"] = tf.Variable([[1.0, 2.0]])
    path = save(tmp_path, 9, saved)
    variables = model_variables(scale=1.0)
    variables["net/dense/other"] = tf.Variable([[1.0, 2.0, 3.0]])  # reshaped, and last in the list
    before = values(variables)
    reshaped = re.escape("net/dense/other (checkpoint [1, 2], model [1, 3])")
    with pytest.raises(common.CheckpointMismatchError, match=reshaped):
        checkpoints.restore(path, variables, list(variables))
    after = values(variables)
    assert after.keys() == before.keys()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


def test_resolve_directory_prefix_and_missing(tmp_path):
    variables = model_variables()
    save(tmp_path, 1, variables)
    latest = save(tmp_path, 2, variables)
    assert checkpoints.resolve(str(tmp_path)) == latest
    assert checkpoints.resolve(str(tmp_path) + "/") == latest
    first = str(tmp_path / "model.ckpt-1")
    assert checkpoints.resolve(first) == first
    for missing in (str(tmp_path / "model.ckpt-3"), str(tmp_path / "nowhere"), "", None):
        with pytest.raises(ValueError, match=re.escape(f"checkpoint: no checkpoint found at {missing!r}")):
            checkpoints.resolve(missing)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="init_from: no checkpoint found at"):
        checkpoints.resolve(str(tmp_path / "empty"), "init_from")


def test_names_with_a_dot_before_a_capital_s_read_back_as_written(tmp_path):
    """The escaping turns "/" into ".S" and "." into "..": decoding must go left to right."""
    variables = {checkpoints.GLOBAL_STEP: tf.Variable(0, dtype=tf.int64),
                 "net/block.Skip/w": tf.Variable([1.0]), "net/a..b/w": tf.Variable([2.0])}
    path = save(tmp_path, 1, variables)
    assert checkpoints.variable_shapes(path) == {"global_step": [], "net/block.Skip/w": [1], "net/a..b/w": [1]}
    checkpoints.check_compatible(path, variables, list(variables))


def test_a_model_scope_named_input_is_the_models_and_the_iterators_state_is_not(tmp_path):
    variables = {checkpoints.GLOBAL_STEP: tf.Variable(0, dtype=tf.int64),
                 "input_layer/embedding/embedding_weights": tf.Variable([[1.0, 2.0]]), "input/w": tf.Variable([3.0])}
    iterator = iter(tf.data.Dataset.range(10))
    next(iterator)
    path = CheckpointStore(str(tmp_path)).save(1, variables, iterator=iterator)
    assert checkpoints.variable_shapes(path) == {"global_step": [], "input_layer/embedding/embedding_weights": [1, 2],
                                                 "input/w": [1]}
    checkpoints.check_compatible(path, variables, list(variables))
    resumed = iter(tf.data.Dataset.range(10))
    assert checkpoints.restore_input(path, resumed) and int(next(resumed)) == 1


def test_the_saver_notice_is_kept_out_of_the_log_while_this_module_uses_tf1s_saver_and_only_then(caplog):
    caplog.set_level("WARNING", logger="tensorflow")
    variable = tf.Variable(1.0)
    with checkpoints.tf1_saver():
        tf.compat.v1.train.Saver([variable])
    assert "Saver is deprecated" not in caplog.text
    tf.compat.v1.train.Saver([variable])  # (a program's own Saver: TensorFlow's notice stands)
    assert "Saver is deprecated" in caplog.text
