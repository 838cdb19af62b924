"""A model dir survives damage and a second writer: the newest checkpoint that loads is used, none loading
is a refusal, and one process at a time trains in it."""

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf

import common
from tests import models

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_job_with(model_dir, steps, *flags):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", "tests.resilience_job", f"--model_dir={model_dir}",
                             f"--train_steps={steps}", *flags], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


def run_job(model_dir, steps):
    return run_job_with(model_dir, steps, "--hidden=8")


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


def checkpoint_steps(model_dir):
    return sorted(int(name[len("model.ckpt-"):-len(".index")]) for name in os.listdir(model_dir)
                  if name.startswith("model.ckpt-") and name.endswith(".index"))


def resume_to_9(model_dir, caplog):
    with caplog.at_level(logging.INFO):
        estimator = train_in_process(model_dir, 9)
    assert estimator.get_variable_value("global_step") == 9
    assert 0 not in checkpoint_steps(model_dir)  # never trained over from step 0
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-9")  # the state file is right again
    for step in checkpoint_steps(model_dir):
        tf.train.load_checkpoint(str(model_dir / f"model.ckpt-{step}")).get_tensor(
            "vars/global_step/.ATTRIBUTES/VARIABLE_VALUE")
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


def start_long_run(model_dir):
    """A run that trains until stopped; returns it once it has saved a checkpoint (its log drained after)."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    process = subprocess.Popen([sys.executable, "-m", "tests.resilience_job", f"--model_dir={model_dir}",
                                "--train_steps=1000000", "--hidden=8"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        if "Saving checkpoints for" in line:
            break
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path):
    model_dir = tmp_path / "model"
    first = start_long_run(model_dir)
    try:
        started = time.time()
        code, out, err = run_job(model_dir, 5)
        assert code == 1 and "Traceback" not in err
        assert f"ERROR: model_dir {model_dir} is in use: pid {first.pid} on {socket.gethostname()}, " in err
        assert "training since 20" in err and "writer.lock" in err
        assert time.time() - started < 60  # refused, not waiting for the first run
        assert first.poll() is None  # the first run trains on
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=120) == 143


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    model_dir = tmp_path / "model"
    first = start_long_run(model_dir)
    first.kill()
    first.wait(timeout=60)
    assert (model_dir / "writer.lock").exists()
    code, out, err = run_job(model_dir, 30)
    assert code == 0, err[-2000:]
    assert "is in use" not in err and "Finished at global step" in out


@pytest.mark.parametrize("stage, stop_signal, status", [("evaluate", "SIGTERM", 143), ("export", "SIGINT", 130)])
def test_a_signal_during_evaluation_or_export_ends_with_one_line_and_its_status(tmp_path, stage, stop_signal, status):
    model_dir = tmp_path / "model"
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", "tests.resilience_job", f"--model_dir={model_dir}",
                             "--train_steps=3", "--hidden=8", f"--stop_during={stage}", f"--stop_signal={stop_signal}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == status, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr
    assert f"Stopped by {stop_signal} outside the train loop; the model dir keeps its checkpoints" in result.stderr
    assert checkpoint_steps(model_dir)[-1] == 3
    assert not (model_dir / "export").exists() or not os.listdir(model_dir / "export")


@pytest.fixture
def small_disk(tmp_path):
    """A 1.5 MiB tmpfs, where the machine lets this process mount one."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=True)


def test_a_full_disk_is_one_line_naming_the_file_and_the_space_and_the_next_start_resumes(small_disk, tmp_path):
    model_dir = small_disk / "model"
    code, out, err = run_job_with(model_dir, 40, "--hidden=200")  # about 0.5 MiB a checkpoint: the third fills it
    assert code == 1 and "Traceback" not in err
    assert f"ERROR: cannot write checkpoint {model_dir}/model.ckpt-" in err
    assert "No space left on device" in err and "it needs about " in err and "KiB are free" in err
    steps = checkpoint_steps(model_dir)
    assert steps and not [name for name in os.listdir(model_dir) if "_temp" in name]
    for step in steps:  # what was saved before still loads
        tf.train.load_checkpoint(str(model_dir / f"model.ckpt-{step}")).get_tensor(
            "vars/global_step/.ATTRIBUTES/VARIABLE_VALUE")
    moved = tmp_path / "moved"  # the user frees space: here, the dir moves to a bigger disk
    shutil.copytree(model_dir, moved)
    code, out, err = run_job_with(moved, steps[-1] + 2, "--hidden=200")
    assert code == 0, err[-2000:]
    assert f"resuming training at global step {steps[-1]}" in err
