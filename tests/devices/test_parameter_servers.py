"""A parameter-server job's chief and serving tasks: a lost ps named, the job resumed; serving ends with the chief."""

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from common.devices import parameter_servers
from tests import free_ports
from tests.ps_cluster import finished, job, saved_steps, wait_for_checkpoint


def test_a_ps_killed_stops_the_job_naming_it_and_the_same_commands_resume(tmp_path, processes):
    started = job(tmp_path, processes, "--train_steps=1000")
    wait_for_checkpoint(tmp_path, started, 100)
    started[("ps", 1)].send_signal(signal.SIGKILL)
    outputs = finished(started)
    chief_err = outputs[("chief", 0)][1]
    assert started[("chief", 0)].returncode == 1
    assert "ERROR: the parameter-server job lost ps:1 (UnavailableError)" in chief_err
    for task in (("worker", 0), ("worker", 1), ("ps", 0)):
        assert started[task].returncode == 1
        assert "stopped answering before training ended" in outputs[task][1]
    last = saved_steps(tmp_path / "model")[-1]
    assert 100 <= last < 1000

    resumed = job(tmp_path, processes, "--train_steps=1000")
    outputs = finished(resumed)
    for task, (_, err) in outputs.items():
        assert resumed[task].returncode == 0, (task, err[-3000:])
    assert f"resuming training at global step {last}" in outputs[("chief", 0)][1]
    assert saved_steps(tmp_path / "model")[-1] == 1000


def test_sigterm_to_the_chief_saves_and_ends_every_task_saying_so(tmp_path, processes):
    started = job(tmp_path, processes, "--train_steps=100000")
    wait_for_checkpoint(tmp_path, started, 50)
    started[("chief", 0)].send_signal(signal.SIGTERM)
    outputs = finished(started)
    assert started[("chief", 0)].returncode == 143
    stop = re.search(r"Stopped by SIGTERM at global step (\d+); saved \S+model.ckpt-(\d+)", outputs[("chief", 0)][1])
    assert stop and stop.group(1) == stop.group(2) and saved_steps(tmp_path / "model")[-1] == int(stop.group(1))
    for task in (("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1)):
        assert started[task].returncode == 0, outputs[task][1][-3000:]
        assert f"The chief has ended (Stopped by SIGTERM at global step {stop.group(1)}" in outputs[task][1]


def test_a_serving_task_ends_with_its_chief_cleanly_only_after_the_chief_said_training_ended(tmp_path):
    chief_port, own_port = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief_port}"], "ps": [f"127.0.0.1:{own_port}"]}
    task = parameter_servers.ServingTask(cluster, "ps", 0)
    script = "import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', %d)); s.listen(4)\ntime.sleep(2)"
    for says_done in (False, True):
        started = time.time()
        chief = subprocess.Popen([sys.executable, "-c", script % chief_port])  # answers for 2 s, then ends
        try:
            if says_done:
                (tmp_path / parameter_servers.DONE_FILE).write_text("training ended at global step 7\n")
                assert task.wait_for_the_chief(str(tmp_path), started, poll_seconds=0.2, patience=3) == \
                    "training ended at global step 7"
            else:
                with pytest.raises(parameter_servers.ChiefLostError, match=re.escape(
                        f"ps:0: the chief (127.0.0.1:{chief_port}) stopped answering before training ended (no "
                        f"new {parameter_servers.DONE_FILE} in {tmp_path})")):
                    task.wait_for_the_chief(str(tmp_path), started, poll_seconds=0.2, patience=3)
        finally:
            chief.wait(timeout=30)
        assert time.time() - started < 10


def test_an_evaluator_task_beside_the_job_evaluates_its_checkpoints_to_the_last(tmp_path, processes):
    started = job(tmp_path, processes, "--train_steps=60", "--train_and_evaluate",
                  tasks=(("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1), ("evaluator", 0)))
    outputs = finished(started)
    for task, (_, err) in outputs.items():
        assert started[task].returncode == 0, (task, err[-3000:])
    out, err = outputs[("evaluator", 0)]
    result = json.loads(out.split("RESULT ")[1].splitlines()[0])
    assert result["global_step"] == 60 and result["accuracy"] > 0.9
    assert "Exiting evaluation, global_step=60 >= train max_steps=60" in err


def test_an_input_fn_returning_a_dataset_made_outside_it_is_refused_naming_that(tmp_path, processes):
    started = job(tmp_path, processes, "--dataset_made_outside")
    outputs = finished(started)
    assert started[("chief", 0)].returncode == 1
    assert ("ValueError: input_fn returned a dataset made outside it; in a parameter-server job each worker calls "
            "input_fn to build its own") in outputs[("chief", 0)][1]
    assert not saved_steps(tmp_path / "model")
