"""Kills and divergence lose nothing: resume is exact, checkpoints stay whole."""

import os
import threading
import time

import numpy as np
import tensorflow as tf

from common.state import checkpoints
from tests.job_runs import run_job, start_job

STEPS = 40


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
    return {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()
            if k not in (checkpoints.OPTIMIZER_STATE, checkpoints.INPUT_STATE + "_STATE")}


def test_sigkill_at_ten_moments_then_resume_matches_an_uninterrupted_run(tmp_path):
    reference_dir, resumed_dir = tmp_path / "reference", tmp_path / "resumed"
    code, out, err = run_job(reference_dir, f"--train_steps={STEPS}")
    assert code == 0, err[-2000:]
    reference = weights(tf.train.latest_checkpoint(str(reference_dir)))

    rng = np.random.RandomState(2024)
    for _ in range(10):
        process = start_job(resumed_dir, f"--train_steps={STEPS}")
        kill_after_saves(process, saves=rng.randint(1, 5), extra_delay=rng.uniform(0, 0.03))
        for index in resumed_dir.glob("*.index"):
            weights(str(index)[:-len(".index")])  # every checkpoint on disk loads, whole
    code, out, err = run_job(resumed_dir, f"--train_steps={STEPS}")
    assert code == 0, err[-2000:]
    assert f"Finished at global step {STEPS}" in out
    resumed = weights(tf.train.latest_checkpoint(str(resumed_dir)))
    assert resumed.keys() == reference.keys()
    for key, value in reference.items():
        np.testing.assert_array_equal(resumed[key], value, err_msg=key)
    assert not [p for p in os.listdir(resumed_dir) if "temp" in p or p.startswith(".tmp")]


def test_divergence_keeps_the_last_finite_checkpoint_and_a_lower_rate_resumes(tmp_path):
    code, out, err = run_job(tmp_path, f"--train_steps={STEPS}", "--nan_at_step=12")
    assert code == 1
    assert "Model diverged with loss = " in err and "at global step" in err
    assert "Model diverged with loss = nan at global step 13" in err  # the step that read global step 12
    latest = tf.train.latest_checkpoint(str(tmp_path))
    saved_step = int(latest.rsplit("-", 1)[1])
    assert saved_step == 12
    assert all(np.isfinite(v).all() for v in weights(latest).values())
    code, out, err = run_job(tmp_path, f"--train_steps={STEPS}", "--learning_rate=1e-3")
    assert code == 0, err[-2000:]
    assert f"resuming training at global step {saved_step}" in err
    assert f"Finished at global step {STEPS}" in out
