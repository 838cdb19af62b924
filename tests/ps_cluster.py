"""tests.ps_job on a local parameter-server cluster: a chief, 2 workers and 2 ps tasks on 127.0.0.1 ports."""

import json
import os
import re
import subprocess
import sys
import time

from tests import ROOT, free_ports


def job(tmp_path, processes, *flags, program="tests.ps_job",
        tasks=(("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1))):
    """Starts `python -m program` on every task of a fresh 5-task cluster; returns {task: Popen}."""
    ports = iter(free_ports(5))
    cluster = {"chief": [f"127.0.0.1:{next(ports)}"], "worker": [f"127.0.0.1:{next(ports)}" for _ in range(2)],
               "ps": [f"127.0.0.1:{next(ports)}" for _ in range(2)]}
    started = {}
    for task_type, index in tasks:
        config = {"cluster": cluster, "task": {"type": task_type, "index": index}}
        started[(task_type, index)] = run(tmp_path, config, *flags, program=program)
        processes.append(started[(task_type, index)])
    return started


def run(tmp_path, config, *flags, program="tests.ps_job"):
    """`python -m program` as the task `config` (a TF_CONFIG, or None: one host); tests.ps_job gets the model dir."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    if config:
        env["TF_CONFIG"] = json.dumps(config)
    if program == "tests.ps_job":
        flags = (f"--model_dir={tmp_path / 'model'}", *flags)
    return subprocess.Popen([sys.executable, "-m", program, *flags], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finished(started, timeout=150):
    return {task: process.communicate(timeout=timeout) for task, process in started.items()}


def saved_steps(model_dir):
    return sorted(int(p.name.split("-")[1].split(".")[0]) for p in model_dir.glob("model.ckpt-*.index"))


def logged_losses(log):
    return [float(loss) for loss in re.findall(r"loss = ([0-9.e-]+), step = \d+", log)]


def wait_for_checkpoint(tmp_path, started, step, timeout=120):
    """Returns once the job's model dir holds a checkpoint at `step` or later (the chief still running)."""
    deadline = time.time() + timeout
    while max(saved_steps(tmp_path / "model"), default=-1) < step:
        assert time.time() < deadline and started[("chief", 0)].poll() is None, "training did not start"
        time.sleep(0.1)
