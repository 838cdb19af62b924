"""The evaluator: each checkpoint the chief writes evaluated once, the end of training found two ways."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import common
from common.state import model_dir_lock, summaries
from common.training import evaluator
from tests import ROOT, models
from tests.mnist_files import sample_files

FEATURES, LABELS = models.blobs(96)


def _estimators(model_dir):
    config = common.RunConfig(save_checkpoints_steps=5, keep_checkpoint_max=None)
    chief = common.Estimator(models.classifier_fn, model_dir, params={"hidden": 4}, config=config)
    return chief, common.Estimator(models.classifier_fn, model_dir, params={"hidden": 4}, config=config)


def _specs(max_steps):
    return (common.TrainSpec(models.train_input(FEATURES, LABELS, 16), max_steps=max_steps),
            common.EvalSpec(models.eval_input(FEATURES, LABELS, 32), steps=None, start_delay_secs=0, throttle_secs=0))


def test_each_checkpoint_is_evaluated_once_and_the_last_step_ends_the_evaluator(tmp_path):
    chief, watcher = _estimators(str(tmp_path))
    train_spec, eval_spec = _specs(15)
    polls = []

    def chief_trains_between_polls(seconds):  # the evaluator's sleep: the chief writes its next checkpoint
        polls.append(seconds)
        chief.train(train_spec.input_fn, max_steps=5 * len(polls))

    metrics, exports = evaluator.run_evaluator(watcher, train_spec, eval_spec, poll_secs=0.5,
                                               sleep=chief_trains_between_polls)
    steps = sorted(step for step, _ in summaries.read_scalars(watcher.eval_dir())["loss"])  # each once
    assert steps == [5, 10, 15] and metrics["global_step"] == 15 and exports == []  # not the untrained step 0
    assert polls == [0.5, 0.5, 0.5]

    # a new evaluator of the same run evaluates only what the eval events do not hold yet
    chief.train(train_spec.input_fn, max_steps=20)
    metrics, _ = evaluator.run_evaluator(watcher, _specs(20)[0], eval_spec)
    assert sorted(step for step, _ in summaries.read_scalars(watcher.eval_dir())["loss"]) == [5, 10, 15, 20]


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _write_lock(model_dir, pid):
    with open(os.path.join(model_dir, model_dir_lock.LOCK_FILE), "w") as f:
        f.write(json.dumps({"pid": pid, "host": socket.gethostname(), "started": "then"}))


def test_a_chief_that_ends_before_its_last_step_ends_the_evaluator_after_its_last_checkpoint(tmp_path):
    chief, watcher = _estimators(str(tmp_path))
    train_spec, eval_spec = _specs(1000)
    chief.train(train_spec.input_fn, max_steps=7)  # the chief stopped early (early stopping, end of input)
    assert model_dir_lock.writer_alive(str(tmp_path)) is True  # this process holds it
    metrics, _ = evaluator.run_evaluator(watcher, train_spec, eval_spec,
                                         sleep=lambda seconds: _write_lock(str(tmp_path), _dead_pid()))
    assert model_dir_lock.writer_alive(str(tmp_path)) is False
    assert sorted(step for step, _ in summaries.read_scalars(watcher.eval_dir())["loss"]) == [5, 7]
    assert metrics["global_step"] == 7


def test_an_evaluator_started_after_the_chief_ended_evaluates_what_is_there_then_waits_idle_secs(tmp_path):
    chief, watcher = _estimators(str(tmp_path))
    train_spec, eval_spec = _specs(1000)
    chief.train(train_spec.input_fn, max_steps=10)
    _write_lock(str(tmp_path), _dead_pid())
    now = [0.0]
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        now[0] += seconds

    metrics, _ = evaluator.run_evaluator(watcher, train_spec, eval_spec, poll_secs=5, idle_secs=60,
                                         clock=lambda: now[0], sleep=sleep)
    assert metrics["global_step"] == 10 and len(waits) == 12  # 60 s of 5 s polls without a new checkpoint


def test_a_chief_and_an_evaluator_process_under_tf_config(tmp_path):
    """python -m mnist.main as TF_CONFIG's chief (--mode=train) and evaluator on 127.0.0.1: the evaluator
    evaluates the checkpoints at 20, 40 and 60 once each, and ends when the chief's last step is evaluated."""
    data_dir = sample_files(str(tmp_path / "data"))
    model_dir = str(tmp_path / "model")
    cluster = {"chief": ["127.0.0.1:29871"]}
    flags = [f"--data_dir={data_dir}", f"--model_dir={model_dir}", "--train_batch_size=32", "--eval_batch_size=64",
             "--eval_every_steps=20", "--steps_per_loop=5", "--random_seed=1", "--train_steps=60"]
    processes = {}
    for task in ("evaluator", "chief"):
        env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2",
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": task, "index": 0}}))
        extra = ["--mode=train"] if task == "chief" else []
        processes[task] = subprocess.Popen([sys.executable, "-m", "mnist.main", *flags, *extra], cwd=ROOT, env=env,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outputs = {task: process.communicate(timeout=300) for task, process in processes.items()}
    for task, process in processes.items():
        assert process.returncode == 0, (task, outputs[task][1][-3000:])
    evaluated = summaries.read_scalars(os.path.join(model_dir, "eval_validation"))["accuracy"]
    assert sorted(step for step, _ in evaluated) == [20, 40, 60]
    assert np.isfinite([value for _, value in evaluated]).all()
    assert "Exiting evaluation, global_step=60 >= train max_steps=60" in outputs["evaluator"][1]
    assert "Test accuracy" in outputs["chief"][0] and "Test accuracy" not in outputs["evaluator"][0]


def test_with_throttle_secs_the_newest_checkpoint_is_evaluated_at_most_once_a_period(tmp_path):
    """As tf.estimator's evaluator: 30 s between polls, a checkpoint each poll, throttle 100 s: step 5 at
    once, 10 and 15 wait, then the last step (20) is evaluated at once and 10 and 15 are skipped."""
    chief, watcher = _estimators(str(tmp_path))
    train_spec, _ = _specs(20)
    eval_spec = common.EvalSpec(models.eval_input(FEATURES, LABELS, 32), steps=None, start_delay_secs=0,
                                throttle_secs=100)
    chief.train(train_spec.input_fn, max_steps=5)
    now = [0.0]

    def poll_later(seconds):
        now[0] += 30
        chief.train(train_spec.input_fn, max_steps=chief.get_variable_value("global_step") + 5)

    metrics, _ = evaluator.run_evaluator(watcher, train_spec, eval_spec, clock=lambda: now[0], sleep=poll_later)
    assert sorted(step for step, _ in summaries.read_scalars(watcher.eval_dir())["loss"]) == [5, 20]
    assert metrics["global_step"] == 20 and now[0] == 90


def test_on_a_model_dir_with_no_checkpoint_and_no_chief_it_gives_up_after_the_stated_time(tmp_path, caplog):
    _, watcher = _estimators(str(tmp_path / "mistyped"))
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    with caplog.at_level("INFO"), pytest.raises(
            evaluator.NothingToEvaluateError, match=rf"no checkpoint appeared in {tmp_path}/mistyped in 30 s, and no "
                                                    r"run trains there \(the folder does not exist\)"):
        evaluator.run_evaluator(watcher, *_specs(10), poll_secs=5, clock=lambda: now[0], sleep=sleep,
                                first_checkpoint_secs=30)
    assert f"evaluating the checkpoints of {tmp_path}/mistyped as they appear (giving up after 30 s" in caplog.text
    assert now[0] == 30 and not (tmp_path / "mistyped").exists()  # nothing made for a mistyped model dir


def test_a_damaged_checkpoint_is_passed_over_and_the_next_one_evaluated(tmp_path, caplog):
    chief, watcher = _estimators(str(tmp_path))
    train_spec, eval_spec = _specs(10)
    chief.train(train_spec.input_fn, max_steps=10)
    [data] = [name for name in os.listdir(tmp_path) if name.startswith("model.ckpt-5.data")]
    with open(tmp_path / data, "r+b") as f:
        f.truncate(10)
    with caplog.at_level("WARNING"):
        metrics, _ = evaluator.run_evaluator(watcher, train_spec, eval_spec)
    assert metrics["global_step"] == 10
    assert sorted(step for step, _ in summaries.read_scalars(watcher.eval_dir())["loss"]) == [10]
    assert "Evaluator: checkpoint damaged, passed over:" in caplog.text and "model.ckpt-5" in caplog.text
