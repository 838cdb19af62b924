"""Running tests/resilience_job.py (an Estimator training job) in a process of its own."""

import os
import subprocess
import sys
import threading

from tests import ROOT


def start_job(model_dir, *flags, stdout=subprocess.PIPE):
    """The job training in model_dir; later flags override earlier ones (absl), so a test's win."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.Popen([sys.executable, "-m", "tests.resilience_job", f"--model_dir={model_dir}", *flags],
                            cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)


def run_job(model_dir, *flags):
    """(exit status, stdout, stderr) of the job run to its end."""
    process = start_job(model_dir, *flags)
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def start_long_run(model_dir):
    """A run that trains until stopped; returns it once it has saved a checkpoint (its log drained after)."""
    process = start_job(model_dir, "--train_steps=1000000", "--hidden=8", stdout=subprocess.DEVNULL)
    for line in process.stderr:
        if "Saving checkpoints for" in line:
            break
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process


def checkpoint_steps(model_dir):
    """The steps of the model.ckpt-N files in model_dir, in order."""
    return sorted(int(name[len("model.ckpt-"):-len(".index")]) for name in os.listdir(model_dir)
                  if name.startswith("model.ckpt-") and name.endswith(".index"))
