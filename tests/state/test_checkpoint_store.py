"""The model_dir checkpoint store: model.ckpt-<step> written and found by listing, rotation,
partial saves removed, the input position saved beside."""

import os

import numpy as np
import tensorflow as tf

from common.state import checkpoints
from common.state.checkpoint_store import CheckpointStore
from tests.state import model_variables, save


def test_save_writes_model_ckpt_step_and_latest_finds_it(tmp_path):
    store = CheckpointStore(str(tmp_path / "model"))
    assert store.latest() is None  # no directory yet
    variables = model_variables()
    variables[checkpoints.GLOBAL_STEP].assign(42)
    path = store.save(42, variables)
    assert path == str(tmp_path / "model" / "model.ckpt-42")
    assert os.path.exists(path + ".index")
    meta = tf.compat.v1.MetaGraphDef.FromString(open(path + ".meta", "rb").read())  # as tf.estimator's files
    assert meta.meta_info_def.meta_graph_version.startswith("variables only") and meta.saver_def.restore_op_name
    assert store.latest() == path
    assert checkpoints.step_of(path) == 42
    assert CheckpointStore(str(tmp_path / "model")).latest() == path  # a new process finds it too


def test_rotation_keeps_the_newest_max_to_keep(tmp_path):
    store = CheckpointStore(str(tmp_path), max_to_keep=2)
    variables = model_variables()
    for step in (10, 20, 30, 40):
        variables[checkpoints.GLOBAL_STEP].assign(step)
        store.save(step, variables)
    indexes = sorted(name for name in os.listdir(tmp_path) if name.endswith(".index"))
    assert indexes == ["model.ckpt-30.index", "model.ckpt-40.index"]
    assert sorted(name for name in os.listdir(tmp_path) if name.endswith(".meta")) == [
        "model.ckpt-30.meta", "model.ckpt-40.meta"]  # rotated with the rest
    assert store.latest() == str(tmp_path / "model.ckpt-40")
    # A store made later for the same directory (a resumed run) goes on rotating the old files.
    save(tmp_path, 50, variables, max_to_keep=2)
    indexes = sorted(name for name in os.listdir(tmp_path) if name.endswith(".index"))
    assert indexes == ["model.ckpt-40.index", "model.ckpt-50.index"]


def test_max_to_keep_zero_keeps_every_checkpoint(tmp_path):
    store = CheckpointStore(str(tmp_path), max_to_keep=0)
    variables = model_variables()
    for step in range(1, 8):
        store.save(step, variables)
    assert len([name for name in os.listdir(tmp_path) if name.endswith(".index")]) == 7


def test_restore_input_round_trips_the_iterator_position(tmp_path):
    dataset = tf.data.Dataset.range(100).shuffle(100, seed=3).batch(4)
    iterator = iter(dataset)
    seen = [next(iterator).numpy() for _ in range(3)]
    variables = model_variables()
    path = CheckpointStore(str(tmp_path)).save(3, variables, iterator)
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


def test_remove_partial_saves_deletes_only_temp_folders(tmp_path):
    variables = model_variables()
    store = CheckpointStore(str(tmp_path))
    path = store.save(3, variables)
    for leftover in ("model.ckpt-4_temp", "model.ckpt-12_temp"):
        (tmp_path / leftover).mkdir()
        (tmp_path / leftover / "part-00000-of-00001.index").write_bytes(b"partial")
    (tmp_path / "notes_temp").mkdir()
    saver_leftover = "model.ckpt-36.data-00000-of-00001.tempstate18409140367826098984"  # TF1's Saver's
    (tmp_path / saver_leftover).write_bytes(b"partial")
    ours = [".tmp-32be1af3-model.ckpt-31.meta", ".tmp-0a1b2c3d-checkpoint"]  # this store's atomic writes, killed
    for leftover in ours + [".tmp-0a1b2c3d-notes.txt"]:
        (tmp_path / leftover).write_bytes(b"partial")
    before = sorted(os.listdir(tmp_path))
    store.remove_partial_saves()
    assert sorted(os.listdir(tmp_path)) == [
        name for name in before if name not in ("model.ckpt-4_temp", "model.ckpt-12_temp", saver_leftover, *ours)]
    assert "notes_temp" in os.listdir(tmp_path)
    assert store.latest() == path
    CheckpointStore(str(tmp_path / "absent")).remove_partial_saves()  # no directory: nothing to do


def test_a_store_saves_the_variables_it_is_given_not_older_ones_of_the_same_names(tmp_path):
    store = CheckpointStore(str(tmp_path))
    first = model_variables(scale=1.0)
    store.save(1, first)
    second = model_variables(scale=5.0)
    path = store.save(2, second)
    np.testing.assert_array_equal(checkpoints.read_variable(path, "net/dense/kernel"), np.full((2, 3), 5.0))
