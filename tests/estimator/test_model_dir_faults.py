"""A model dir survives damage: the newest checkpoint that loads is used, none loading is a refusal,
a full disk is one line."""

import logging
import os
import shutil

import pytest
import tensorflow as tf

import common
from tests import models
from tests.job_runs import checkpoint_steps, run_job


def train_in_process(model_dir, max_steps):
    """The Estimator in this process: a checkpoint at every step, the last 3 kept."""
    config = common.RunConfig(save_checkpoints_steps=1, keep_checkpoint_max=3, tf_random_seed=11,
                              log_step_count_steps=1, save_summary_steps=0)
    estimator = common.Estimator(models.classifier_fn, str(model_dir), config=config, params={"hidden": 8})
    features, labels = models.blobs(64)
    estimator.train(models.train_input(features, labels, 16), max_steps=max_steps)
    return estimator


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model dir trained to step 6, a checkpoint at every step, the last 3 kept (4, 5, 6)."""
    model_dir = tmp_path_factory.mktemp("trained") / "model"
    train_in_process(model_dir, 6)
    return model_dir


def copy_of(trained, tmp_path):
    model_dir = tmp_path / "model"
    shutil.copytree(trained, model_dir)
    return model_dir


def resume_to_9(model_dir, caplog):
    with caplog.at_level(logging.INFO):
        estimator = train_in_process(model_dir, 9)
    assert estimator.get_variable_value("global_step") == 9
    assert 0 not in checkpoint_steps(model_dir)  # never trained over from step 0
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-9")  # the state file is right again
    for step in checkpoint_steps(model_dir):
        tf.train.load_checkpoint(str(model_dir / f"model.ckpt-{step}")).get_tensor(
            "global_step")
    return caplog.text


def damage_state_file(model_dir, how):
    state = model_dir / "checkpoint"
    if how == "garbage":
        state.write_text("this is { not a checkpoint state")
    elif how == "empty":
        state.write_text("")
    elif how == "missing prefix":
        state.write_text('model_checkpoint_path: "model.ckpt-99"\nall_model_checkpoint_paths: "model.ckpt-99"\n')
    else:
        state.unlink()


@pytest.mark.parametrize("how", ["garbage", "empty", "missing prefix", "deleted"])
def test_a_damaged_state_file_is_only_a_hint_training_resumes_from_the_newest_checkpoint(trained, tmp_path, how,
                                                                                         caplog):
    model_dir = copy_of(trained, tmp_path)
    damage_state_file(model_dir, how)
    log = resume_to_9(model_dir, caplog)
    assert "resuming training at global step 6" in log


@pytest.mark.parametrize("damage", ["index deleted", "data cut short"])
def test_a_damaged_newest_checkpoint_is_passed_over_with_a_warning(trained, tmp_path, damage, caplog):
    model_dir = copy_of(trained, tmp_path)
    newest = model_dir / "model.ckpt-6"
    if damage == "index deleted":
        os.remove(f"{newest}.index")
    else:
        data = model_dir / "model.ckpt-6.data-00000-of-00001"
        data.write_bytes(data.read_bytes()[:100])
    log = resume_to_9(model_dir, caplog)
    assert "model.ckpt-6 cannot be read" in log and "Restored" in log and "model.ckpt-5 instead" in log
    assert "resuming training at global step 5" in log


def test_a_dir_where_no_checkpoint_loads_is_refused_and_left_as_it_was(trained, tmp_path):
    model_dir = copy_of(trained, tmp_path)
    for step in (4, 5, 6):
        data = model_dir / f"model.ckpt-{step}.data-00000-of-00001"
        data.write_bytes(data.read_bytes()[:50])
    before = {name: (model_dir / name).read_bytes() for name in os.listdir(model_dir)}
    with pytest.raises(common.CheckpointDamagedError) as refused:
        train_in_process(model_dir, 9)
    message = str(refused.value)
    assert message.startswith(f"no checkpoint in {model_dir} can be loaded")
    for step in (4, 5, 6):
        assert f"model.ckpt-{step} cannot be read" in message
    assert "restore the files from a backup" in message
    assert {name: (model_dir / name).read_bytes() for name in os.listdir(model_dir)} == before


def test_a_full_disk_is_one_line_naming_the_file_and_the_space_and_the_next_start_resumes(small_disk, tmp_path):
    model_dir = small_disk / "model"
    # about 0.5 MiB a checkpoint: the third fills it
    code, out, err = run_job(model_dir, "--train_steps=40", "--hidden=200")
    assert code == 1 and "Traceback" not in err
    assert f"ERROR: cannot write checkpoint {model_dir}/model.ckpt-" in err
    assert "No space left on device" in err and "it needs about " in err and "KiB are free" in err
    steps = checkpoint_steps(model_dir)
    assert steps and not [name for name in os.listdir(model_dir) if "_temp" in name]
    for step in steps:  # what was saved before still loads
        tf.train.load_checkpoint(str(model_dir / f"model.ckpt-{step}")).get_tensor(
            "global_step")
    moved = tmp_path / "moved"  # the user frees space: here, the dir moves to a bigger disk
    shutil.copytree(model_dir, moved)
    code, out, err = run_job(moved, f"--train_steps={steps[-1] + 2}", "--hidden=200")
    assert code == 0, err[-2000:]
    assert f"resuming training at global step {steps[-1]}" in err
