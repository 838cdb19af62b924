"""Steps scheduled on the workers of a parameter-server job (tests.ps_job, unedited, on local processes)."""

import json
import signal

from tests.ps_cluster import finished, job, logged_losses, run, saved_steps, wait_for_checkpoint


def test_a_parameter_server_job_trains_asynchronously_to_the_asked_step(tmp_path, processes):
    started = job(tmp_path, processes, "--train_steps=40")
    outputs = finished(started)
    for task, (out, err) in outputs.items():
        assert started[task].returncode == 0, (task, err[-3000:])
        assert out.strip().endswith("done")
    chief_out, chief_err = outputs[("chief", 0)]
    devices = json.loads(chief_out.split("DEVICES ")[1].splitlines()[0])
    assert len(devices) == 13  # global step, 4 weights, their momenta, the optimizer's step and rate
    assert all(device.startswith("/job:ps/") for device in devices.values()), devices
    assert {d.split("/task:")[1][0] for d in devices.values()} == {"0", "1"}  # spread over both ps tasks
    losses = logged_losses(chief_err)
    assert max(losses[-3:]) < min(0.1, losses[0] / 5), losses
    assert saved_steps(tmp_path / "model")[-1] == 40
    for task in (("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1)):
        assert f"The chief has ended (training ended at global step 40): {task[0]}:{task[1]} stops serving" in \
            outputs[task][1]

    one_host = run(tmp_path, None, "--evaluate_only")  # the job's checkpoints, read without a cluster
    processes.append(one_host)
    out, err = one_host.communicate(timeout=100)
    assert one_host.returncode == 0, err[-3000:]
    metrics = json.loads(out.split("EVAL ")[1].splitlines()[0])
    assert metrics["global_step"] == 40 and metrics["accuracy"] > 0.9


def test_a_worker_killed_mid_run_leaves_the_job_to_end_at_its_step(tmp_path, processes):
    started = job(tmp_path, processes, "--train_steps=1000")
    wait_for_checkpoint(tmp_path, started, 100)
    started[("worker", 1)].send_signal(signal.SIGKILL)
    outputs = finished(started)
    assert started[("worker", 1)].returncode == -signal.SIGKILL
    for task in (("chief", 0), ("worker", 0), ("ps", 0), ("ps", 1)):
        assert started[task].returncode == 0, (task, outputs[task][1][-3000:])
    assert saved_steps(tmp_path / "model")[-1] == 1000
    assert "failed with" in outputs[("chief", 0)][1]  # the coordinator's word on the lost worker


def test_a_premade_wide_and_deep_classifier_trains_on_the_ps_tasks_with_each_slot_beside_its_variable(
        tmp_path, processes):
    started = job(tmp_path, processes, "--premade", "--train_steps=300")
    outputs = finished(started)
    for task, (_, err) in outputs.items():
        assert started[task].returncode == 0, (task, err[-3000:])
    out, err = outputs[("chief", 0)]
    devices = json.loads(out.split("DEVICES ")[1].splitlines()[0])
    assert all(device.startswith("/job:ps/") for device in devices.values()), devices
    for name, device in devices.items():  # Ftrl's and Adagrad's slots: where their variable is (one fused kernel)
        owner, _, slot = name.rpartition("/")
        if owner in devices and slot in ("Ftrl", "Ftrl_1", "Adagrad"):
            assert device == devices[owner], (name, device, devices[owner])
    assert any(name.endswith("/Ftrl_1") for name in devices) and any(name.endswith("/Adagrad") for name in devices)
    metrics = json.loads(out.split("EVAL ")[1].splitlines()[0])
    assert metrics["global_step"] == 300 and metrics["accuracy"] > 0.6 and metrics["average_loss"] < 0.68
