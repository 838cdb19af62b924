"""Stop signals: SIGTERM in training saves the current step and exits 143; outside training a
signal ends the program with one line and 128 + signal, the model dir whole."""

import os
import signal
import subprocess
import sys

import pytest
import tensorflow as tf

from tests import ROOT
from tests.job_runs import checkpoint_steps, run_job, start_job


@pytest.mark.parametrize("stage, stop_signal, status", [("evaluate", "SIGTERM", 143), ("export", "SIGINT", 130)])
def test_a_signal_during_evaluation_or_export_ends_with_one_line_and_its_status(tmp_path, stage, stop_signal, status):
    model_dir = tmp_path / "model"
    code, _, err = run_job(model_dir, "--train_steps=3", "--hidden=8", f"--stop_during={stage}",
                           f"--stop_signal={stop_signal}")
    assert code == status, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert f"Stopped by {stop_signal} outside the train loop; the model dir keeps its checkpoints" in err
    assert checkpoint_steps(model_dir)[-1] == 3
    assert not (model_dir / "export").exists() or not os.listdir(model_dir / "export")


def test_sigterm_saves_the_current_step_and_exits_143(tmp_path):
    process = start_job(tmp_path, "--train_steps=100000")
    seen = 0
    for line in process.stderr:
        if "Saving checkpoints for" in line:
            seen += 1
            if seen == 3:
                process.send_signal(signal.SIGTERM)
                break
    err = process.stderr.read()
    assert process.wait(timeout=120) == 143
    assert "Stopped by SIGTERM at global step" in err
    step = int(err.split("Stopped by SIGTERM at global step ")[1].split(";")[0])
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest.endswith(f"model.ckpt-{step}")
    assert int(tf.train.load_checkpoint(latest).get_tensor("global_step")) == step


PLAIN_EVALUATE = """
import os, signal, sys
import common
from common import hooks
from tests import models

class SignalAtBatch(hooks.Hook):
    def after_step(self, step, values, context):
        if step == 2:
            os.kill(os.getpid(), signal.SIGTERM)

features, labels = models.blobs(64)
est = common.Estimator(models.classifier_fn, sys.argv[1], params={"hidden": 4})
est.train(models.train_input(features, labels, 8), steps=1)
est.evaluate(models.eval_input(features, labels, 8), hooks=[SignalAtBatch()])
print("not reached")
"""


def test_sigterm_in_a_plain_evaluate_ends_the_process_as_before_with_a_line_saying_what_stopped(tmp_path):
    """A program's own evaluate(), no signal handler of its own: TF 2.15 and this project ended it with -15 and
    no word; the status stays, and an ERROR line names the evaluation and says nothing of it was written."""
    done = subprocess.run([sys.executable, "-c", PLAIN_EVALUATE, str(tmp_path / "model")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGTERM and "not reached" not in done.stdout
    assert (f"Received SIGTERM: evaluate() of {tmp_path / 'model' / 'model.ckpt-1'} stopped; nothing of it was "
            "written.") in done.stderr
    assert not (tmp_path / "model" / "eval").exists()
    assert checkpoint_steps(tmp_path / "model") == [0, 1]


PY_FUNCTION_INPUT = """
import os, signal, sys, time
import tensorflow as tf
import common
from common import hooks
from tests import models

class Stop(hooks.Hook):
    def after_step(self, step, values, context):
        if step == 5:
            if sys.argv[2] == "sigterm":
                os.kill(os.getpid(), signal.SIGTERM)
            else:
                raise RuntimeError("a hook failed at step 5")

def slow(value):
    time.sleep(0.02)
    return value

def input_fn():  # a tf.py_function in the input, its prefetch thread busy when train() stops
    features, labels = models.blobs(64)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(8)
    return dataset.map(lambda x, y: (tf.py_function(slow, [x], tf.float32), y)).map(
        lambda x, y: (tf.ensure_shape(x, [None, 4]), y))

est = common.Estimator(models.classifier_fn, sys.argv[1], params={"hidden": 4})
est.train(input_fn, steps=100000, hooks=[Stop()])
print("not reached")
"""


@pytest.mark.parametrize("how, status", [("sigterm", 143), ("hook_error", 1)])
def test_a_program_whose_train_stops_uncaught_with_a_py_function_input_ends(tmp_path, how, status):
    """TensorFlow's teardown of an input iterator running a py_function hung the interpreter's exit while the
    error's frames held it; those frames let go of it now. SIGTERM: one line, status 143, no traceback."""
    done = subprocess.run([sys.executable, "-c", PY_FUNCTION_INPUT, str(tmp_path / "model"), how], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == status and "not reached" not in done.stdout, done.stderr[-3000:]
    if how == "sigterm":
        assert "Traceback" not in done.stderr
        assert "Stopped by SIGTERM at global step 5; saved" in done.stderr
        assert checkpoint_steps(tmp_path / "model")[-1] == 5
    else:
        assert "RuntimeError: a hook failed at step 5" in done.stderr
