"""Kills, signals and divergence lose nothing: resume is exact, checkpoints stay whole."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 40


def start(model_dir, *flags):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.Popen([sys.executable, "-m", "tests.resilience_job", f"--model_dir={model_dir}",
                             f"--train_steps={STEPS}", *flags], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(model_dir, *flags):
    process = start(model_dir, *flags)
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def kill_after_saves(process, saves, extra_delay):
    """SIGKILL once `saves` checkpoint lines have appeared (plus a delay)."""
    seen, lines = 0, []
    for line in process.stderr:
        lines.append(line)
        if "Saving checkpoints for" in line:
            seen += 1
            if seen >= saves:
                time.sleep(extra_delay)
                process.kill()
                break
    process.wait(timeout=60)
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return "".join(lines)


def weights(path):
    reader = tf.train.load_checkpoint(path)
    return {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map() if k.startswith("vars/")}


def test_sigkill_at_ten_moments_then_resume_matches_an_uninterrupted_run(tmp_path):
    reference_dir, resumed_dir = tmp_path / "reference", tmp_path / "resumed"
    code, out, err = run(reference_dir)
    assert code == 0, err[-2000:]
    reference = weights(tf.train.latest_checkpoint(str(reference_dir)))

    rng = np.random.RandomState(2024)
    for _ in range(10):
        process = start(resumed_dir)
        kill_after_saves(process, saves=rng.randint(1, 5), extra_delay=rng.uniform(0, 0.03))
        for index in resumed_dir.glob("*.index"):
            weights(str(index)[:-len(".index")])  # every checkpoint on disk loads, whole
    code, out, err = run(resumed_dir)
    assert code == 0, err[-2000:]
    assert f"Finished at global step {STEPS}" in out
    resumed = weights(tf.train.latest_checkpoint(str(resumed_dir)))
    assert resumed.keys() == reference.keys()
    for key, value in reference.items():
        np.testing.assert_array_equal(resumed[key], value, err_msg=key)
    assert not [p for p in os.listdir(resumed_dir) if "temp" in p or p.startswith(".tmp")]


def test_sigterm_saves_the_current_step_and_exits_143(tmp_path):
    process = start(tmp_path, "--train_steps=100000")
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
    assert int(tf.train.load_checkpoint(latest).get_tensor("vars/global_step/.ATTRIBUTES/VARIABLE_VALUE")) == step


def test_divergence_keeps_the_last_finite_checkpoint_and_a_lower_rate_resumes(tmp_path):
    code, out, err = run(tmp_path, "--nan_at_step=12")
    assert code == 1
    assert "Model diverged with loss = " in err and "at global step" in err
    assert "Model diverged with loss = nan at global step 13" in err  # the step that read global step 12
    latest = tf.train.latest_checkpoint(str(tmp_path))
    saved_step = int(latest.rsplit("-", 1)[1])
    assert saved_step == 12
    assert all(np.isfinite(v).all() for v in weights(latest).values())
    code, out, err = run(tmp_path, "--learning_rate=1e-3")
    assert code == 0, err[-2000:]
    assert f"resuming training at global step {saved_step}" in err
    assert f"Finished at global step {STEPS}" in out
