"""Checkpoints by stable name: save and rotation, reading, the different-model check, input state, warm start."""

import os
import re

import numpy as np
import pytest
import tensorflow as tf

import common
from common import checkpoints


def model_variables(scale=1.0, kernel_shape=(2, 3)):
    """A tiny model's named variables, as the Estimator hands them to the store."""
    return {
        checkpoints.GLOBAL_STEP: tf.Variable(0, dtype=tf.int64),
        "net/dense/kernel": tf.Variable(np.full(kernel_shape, scale, np.float32)),
        "net/dense/bias": tf.Variable(np.full([kernel_shape[-1]], 2 * scale, np.float32)),
        "optimizer/momentum": tf.Variable(np.full(kernel_shape, -scale, np.float32)),
    }


MODEL_NAMES = ["net/dense/kernel", "net/dense/bias"]


def save(directory, step, variables, **store_args):
    variables[checkpoints.GLOBAL_STEP].assign(step)
    return checkpoints.CheckpointStore(str(directory), **store_args).save(step, variables)


def values(variables):
    return {name: variable.numpy().copy() for name, variable in variables.items()}


def test_save_writes_model_ckpt_step_and_latest_finds_it(tmp_path):
    store = checkpoints.CheckpointStore(str(tmp_path / "model"))
    assert store.latest() is None  # no directory yet
    variables = model_variables()
    variables[checkpoints.GLOBAL_STEP].assign(42)
    path = store.save(42, variables)
    assert path == str(tmp_path / "model" / "model.ckpt-42")
    assert os.path.exists(path + ".index")
    assert store.latest() == path
    assert checkpoints.step_of(path) == 42
    assert checkpoints.CheckpointStore(str(tmp_path / "model")).latest() == path  # a new process finds it too


def test_rotation_keeps_the_newest_max_to_keep(tmp_path):
    store = checkpoints.CheckpointStore(str(tmp_path), max_to_keep=2)
    variables = model_variables()
    for step in (10, 20, 30, 40):
        variables[checkpoints.GLOBAL_STEP].assign(step)
        store.save(step, variables)
    indexes = sorted(name for name in os.listdir(tmp_path) if name.endswith(".index"))
    assert indexes == ["model.ckpt-30.index", "model.ckpt-40.index"]
    assert store.latest() == str(tmp_path / "model.ckpt-40")
    # A store made later for the same directory (a resumed run) goes on rotating the old files.
    save(tmp_path, 50, variables, max_to_keep=2)
    indexes = sorted(name for name in os.listdir(tmp_path) if name.endswith(".index"))
    assert indexes == ["model.ckpt-40.index", "model.ckpt-50.index"]


def test_max_to_keep_zero_keeps_every_checkpoint(tmp_path):
    store = checkpoints.CheckpointStore(str(tmp_path), max_to_keep=0)
    variables = model_variables()
    for step in range(1, 8):
        store.save(step, variables)
    assert len([name for name in os.listdir(tmp_path) if name.endswith(".index")]) == 7


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
    early = checkpoints.CheckpointStore(str(tmp_path / "early")).save(
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


def test_restore_input_round_trips_the_iterator_position(tmp_path):
    dataset = tf.data.Dataset.range(100).shuffle(100, seed=3).batch(4)
    iterator = iter(dataset)
    seen = [next(iterator).numpy() for _ in range(3)]
    variables = model_variables()
    path = checkpoints.CheckpointStore(str(tmp_path)).save(3, variables, iterator)
    expected = [next(iterator).numpy() for _ in range(2)]

    resumed = iter(dataset)
    assert checkpoints.restore_input(path, resumed) is True
    np.testing.assert_array_equal(np.stack([next(resumed).numpy() for _ in range(2)]), np.stack(expected))
    # The restored position is past the batches seen before the save.
    assert not set(np.concatenate(seen)) & set(np.concatenate(expected))
    # The variables saved beside the input state still read by name.
    assert checkpoints.variable_shapes(path)["net/dense/kernel"] == [2, 3]


def test_restore_input_is_false_for_a_checkpoint_without_input_state(tmp_path):
    path = save(tmp_path, 1, model_variables())
    iterator = iter(tf.data.Dataset.range(10))
    assert checkpoints.restore_input(path, iterator) is False
    assert int(next(iterator)) == 0  # left at its start


def test_warm_start_copies_only_the_matched_variables(tmp_path):
    source = model_variables(scale=4.0)
    source["head/kernel"] = tf.Variable(tf.fill([3, 1], 9.0))
    save(tmp_path / "source", 100, source)
    variables = model_variables(scale=1.0)
    variables["head/kernel"] = tf.Variable(tf.zeros([3, 1]))
    settings = common.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="net/")
    names = checkpoints.warm_start(settings, variables, MODEL_NAMES + ["head/kernel"], MODEL_NAMES + ["head/kernel"])
    assert names == MODEL_NAMES
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.full([2, 3], 4.0))
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    np.testing.assert_array_equal(variables["head/kernel"].numpy(), np.zeros([3, 1]))


def test_warm_start_default_regex_takes_every_model_variable_and_matches_from_the_start(tmp_path):
    path = save(tmp_path, 5, model_variables(scale=4.0))
    variables = model_variables(scale=1.0)
    assert checkpoints.warm_start(common.WarmStartSettings(path), variables, MODEL_NAMES, MODEL_NAMES) == MODEL_NAMES
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    # Only the given model names: neither the step nor optimizer state comes with a warm start.
    assert int(variables["global_step"].numpy()) == 0
    np.testing.assert_array_equal(variables["optimizer/momentum"].numpy(), np.full([2, 3], -1.0))
    # re.match: "dense" does not match "net/dense/..." names.
    assert checkpoints.warm_start(common.WarmStartSettings(path, "dense"), model_variables(), MODEL_NAMES,
                                  MODEL_NAMES) == []


def test_a_warm_start_regex_takes_trainable_variables_and_a_list_of_them_any_variable(tmp_path):
    """As tf.estimator: a regex string looks in TRAINABLE_VARIABLES only (a batch-norm statistic keeps its
    own value); a list of regexes in every model variable; None takes nothing."""
    path = save(tmp_path, 5, model_variables(scale=4.0))
    statistic = ["net/dense/bias"]  # standing for a non-trainable variable
    variables = model_variables(scale=1.0)
    assert checkpoints.warm_start(common.WarmStartSettings(path), variables, MODEL_NAMES, MODEL_NAMES[:1]) == \
        MODEL_NAMES[:1]
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 2.0))
    assert checkpoints.warm_start(common.WarmStartSettings(path, ["net/dense/b"]), variables, MODEL_NAMES,
                                  MODEL_NAMES[:1]) == statistic
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    assert checkpoints.warm_start(common.WarmStartSettings(path, None), variables, MODEL_NAMES, MODEL_NAMES) == []


def test_warm_start_errors_on_missing_variables(tmp_path):
    save(tmp_path, 5, model_variables())
    variables = model_variables()
    variables["net/extra/w"] = tf.Variable(1.0)
    with pytest.raises(common.CheckpointMismatchError,
                       match=r"variables matching 'net/' are not in that checkpoint: net/extra/w$"):
        checkpoints.warm_start(common.WarmStartSettings(str(tmp_path), "net/"), variables,
                               MODEL_NAMES + ["net/extra/w"], MODEL_NAMES + ["net/extra/w"])
    assert variables["net/extra/w"].numpy() == 1.0


def test_warm_start_errors_on_reshaped_variables_and_assigns_nothing(tmp_path):
    save(tmp_path, 5, model_variables(scale=4.0, kernel_shape=(2, 3)))
    variables = model_variables(scale=1.0, kernel_shape=(2, 3))
    variables["net/dense/bias"] = tf.Variable(tf.ones([5]))
    with pytest.raises(common.CheckpointMismatchError, match=r"shapes differ for net/dense/bias$"):
        checkpoints.warm_start(common.WarmStartSettings(str(tmp_path)), variables, MODEL_NAMES, MODEL_NAMES)
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.ones([2, 3]))


def test_warm_start_from_nowhere_says_so(tmp_path):
    with pytest.raises(ValueError, match="warm_start_from: no checkpoint found at"):
        checkpoints.warm_start(common.WarmStartSettings(str(tmp_path / "none")), model_variables(), MODEL_NAMES,
                               MODEL_NAMES)


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


def test_remove_partial_saves_deletes_only_temp_folders(tmp_path):
    variables = model_variables()
    store = checkpoints.CheckpointStore(str(tmp_path))
    path = store.save(3, variables)
    for leftover in ("model.ckpt-4_temp", "model.ckpt-12_temp"):
        (tmp_path / leftover).mkdir()
        (tmp_path / leftover / "part-00000-of-00001.index").write_bytes(b"partial")
    (tmp_path / "notes_temp").mkdir()
    before = sorted(os.listdir(tmp_path))
    store.remove_partial_saves()
    assert sorted(os.listdir(tmp_path)) == [
        name for name in before if name not in ("model.ckpt-4_temp", "model.ckpt-12_temp")]
    assert "notes_temp" in os.listdir(tmp_path)
    assert store.latest() == path
    checkpoints.CheckpointStore(str(tmp_path / "absent")).remove_partial_saves()  # no directory: nothing to do


def test_names_with_a_dot_before_a_capital_s_read_back_as_written(tmp_path):
    """The escaping turns "/" into ".S" and "." into "..": decoding must go left to right."""
    variables = {checkpoints.GLOBAL_STEP: tf.Variable(0, dtype=tf.int64),
                 "net/block.Skip/w": tf.Variable([1.0]), "net/a..b/w": tf.Variable([2.0])}
    path = save(tmp_path, 1, variables)
    assert checkpoints.variable_shapes(path) == {"global_step": [], "net/block.Skip/w": [1], "net/a..b/w": [1]}
    checkpoints.check_compatible(path, variables, list(variables))


def test_a_store_saves_the_variables_it_is_given_not_older_ones_of_the_same_names(tmp_path):
    store = checkpoints.CheckpointStore(str(tmp_path))
    first = model_variables(scale=1.0)
    store.save(1, first)
    second = model_variables(scale=5.0)
    path = store.save(2, second)
    np.testing.assert_array_equal(checkpoints.read_variable(path, "net/dense/kernel"), np.full((2, 3), 5.0))
