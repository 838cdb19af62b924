"""Two worker processes on 127.0.0.1: synchronous, identical, equal to one process on the union."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from common.devices import hosts, tf_config
from tests import ROOT, free_ports


def launch(tmp_path, task=None, cluster=None, *flags):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    if task:
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": task[0], "index": task[1]}})
    return subprocess.Popen([sys.executable, "-m", "tests.multiworker_job", *flags], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def saved_steps(model_dir):
    return sorted(int(p.name.split("-")[1].split(".")[0]) for p in model_dir.glob("model.ckpt-*.index"))


def load(path):
    with np.load(path) as archive:
        return {k.replace("|", "/"): archive[k] for k in archive.files}


def test_two_workers_stay_identical_and_equal_one_process_on_both_batches(tmp_path, processes):
    chief_port, worker_port = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    model_dir = tmp_path / "model"
    for task, dump in ((("chief", 0), "chief.npz"), (("worker", 0), "worker.npz")):
        processes.append(launch(tmp_path, task, cluster, f"--model_dir={model_dir}", f"--dump={tmp_path / dump}"))
    outputs = [p.communicate(timeout=100) for p in processes]
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, err[-3000:]
    reference = launch(tmp_path, None, None, f"--model_dir={tmp_path / 'single'}", "--batch_size=32",
                       f"--dump={tmp_path / 'single.npz'}")
    processes.append(reference)
    out, err = reference.communicate(timeout=100)
    assert reference.returncode == 0, err[-3000:]

    chief, worker, single = (load(tmp_path / f) for f in ("chief.npz", "worker.npz", "single.npz"))
    assert chief.keys() == worker.keys() == single.keys()
    assert int(chief["global_step"]) == 6
    for name in chief:
        np.testing.assert_array_equal(chief[name], worker[name], err_msg=name)
        np.testing.assert_allclose(chief[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)

    scratch = outputs[1][1].split("checkpoints and summaries go to ")[1].split(",")[0]
    assert not os.path.exists(scratch)
    assert len(list(model_dir.glob("events.out.tfevents.*"))) == 1
    assert saved_steps(model_dir) == [0, 2, 4, 6]


def test_a_dead_worker_makes_the_chief_fail_with_a_clear_error(tmp_path, processes):
    chief_port, worker_port = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    common = (f"--model_dir={tmp_path / 'model'}", "--train_steps=1000000", "--collective_timeout_secs=15")
    chief = launch(tmp_path, ("chief", 0), cluster, *common)
    worker = launch(tmp_path, ("worker", 0), cluster, *common)
    processes.extend([chief, worker])
    deadline = time.time() + 90
    while max(saved_steps(tmp_path / "model"), default=-1) < 4:  # model.ckpt-4 itself may be rotated away already
        assert time.time() < deadline and chief.poll() is None, "training did not start"
        time.sleep(0.2)
    worker.send_signal(signal.SIGKILL)
    killed = time.time()
    out, err = chief.communicate(timeout=120)
    assert chief.returncode == 1
    assert "lost contact with the other hosts" in err
    assert time.time() - killed < 90


@pytest.mark.parametrize("tf_config", [None, '{"cluster": {"chief": ["127.0.0.1:1"]}, "task": {"type": "chief"}}'])
def test_one_host_is_a_cluster_of_one_whose_cross_host_operations_are_the_identity(monkeypatch, tf_config):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", tf_config)
    cluster = hosts.from_tf_config()
    assert isinstance(cluster, hosts.LocalCluster)
    assert cluster.is_chief and cluster.num_workers == 1 and cluster.worker_index == 0
    sparse = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([3]), tf.constant([5, 2]))
    dense = tf.constant([1.0, 2.0])
    reduced = cluster.all_reduce([sparse, dense])
    assert reduced[0] is sparse and reduced[1] is dense  # nothing converted, nothing copied
    dataset = tf.data.Dataset.range(5)
    assert cluster.shard(dataset) is dataset
    with pytest.raises(tf.errors.UnavailableError):  # no cluster to lose: the error stays what it is
        with cluster.reporting_lost_workers():
            raise tf.errors.UnavailableError(None, None, "gone")


@pytest.mark.parametrize("tf_config, words", [
    ('{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 5}}',
     "TF_CONFIG task worker:5 is not in the cluster: it has 1 worker task(s)"),
    ('{"cluster": {"chief": ["localhost:1"]}, "task": {"type": "ps", "index": 0}}',
     "TF_CONFIG task ps:0 is not in the cluster: it has 0 ps task(s)"),
    ('{"cluster": {"chief": ["localhost"]}, "task": {"type": "chief"}}',
     "TF_CONFIG cluster.chief[0] = 'localhost' is not a host:port address"),
    ('{"cluster": {"chief": ["h:1"], "worker": ["h:99999"]}, "task": {"type": "chief"}}',
     "TF_CONFIG cluster.worker[0] = 'h:99999' is not a host:port address"),
    ('{"cluster": {"chief": "h:1"}, "task": {"type": "chief"}}', "TF_CONFIG cluster.chief must be a list"),
    ('{"cluster": {"chief": ["h:1"], "evaluators": ["h:2"]}, "task": {"type": "chief"}}',
     "TF_CONFIG has ['evaluators'] tasks; a cluster has chief, worker and (for asynchronous training) ps tasks"),
    ('{"cluster": {"chief": ["h:1"], "master": ["h:2"]}, "task": {"type": "chief"}}',
     "TF_CONFIG has both master and chief tasks: master is TF1's name of the chief"),
    ('{"cluster": {"worker": ["h:1"], "ps": ["h:2"]}, "task": {"type": "worker"}}',
     "TF_CONFIG has ps tasks but no chief"),
    ("[1, 2]", "TF_CONFIG must be a JSON object"),
    ("{cluster:", "TF_CONFIG is not valid JSON"),
])
def test_tf_config_is_checked_whole_whatever_the_cluster_size(monkeypatch, tf_config, words):
    monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(hosts.ClusterConfigError) as raised:
        hosts.from_tf_config()
    assert words in str(raised.value)


def lone_chief(tmp_path, processes, start_timeout):
    """A chief of a two-task cluster whose worker is never started; returns it and both ports."""
    chief_port, worker_port = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    chief = launch(tmp_path, ("chief", 0), cluster, f"--model_dir={tmp_path / 'model'}",
                   f"--cluster_start_timeout_secs={start_timeout}")
    processes.append(chief)
    return chief, chief_port, worker_port


def test_a_chief_whose_worker_never_starts_stops_at_the_start_up_limit_naming_it(tmp_path, processes):
    chief, _, worker_port = lone_chief(tmp_path, processes, 3)
    out, err = chief.communicate(timeout=120)
    assert chief.returncode == 1 and "Traceback" not in err
    assert (f"ERROR: chief:0: the tasks worker:0 (127.0.0.1:{worker_port}) of TF_CONFIG did not start within 3 s "
            "(--cluster_start_timeout_secs)") in err
    assert not (tmp_path / "model").exists()


def test_sigterm_ends_the_start_up_wait_at_once(tmp_path, processes):
    chief, chief_port, _ = lone_chief(tmp_path, processes, 600)
    deadline = time.time() + 120
    while not tf_config.accepts(f"127.0.0.1:{chief_port}"):  # listening: it is waiting for the worker
        assert chief.poll() is None and time.time() < deadline
        time.sleep(0.2)
    signalled = time.time()
    chief.send_signal(signal.SIGTERM)
    out, err = chief.communicate(timeout=60)
    assert chief.returncode == 143 and time.time() - signalled < 10
    assert "Stopped by SIGTERM outside the train loop" in err and "Traceback" not in err


def test_sigterm_to_a_worker_makes_the_chief_save_at_the_step_both_stop_at(tmp_path, processes):
    chief_port, worker_port = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    model_dir = tmp_path / "model"
    flags = (f"--model_dir={model_dir}", "--train_steps=1000000", "--collective_timeout_secs=30")
    chief, worker = (launch(tmp_path, task, cluster, *flags) for task in (("chief", 0), ("worker", 0)))
    processes.extend([chief, worker])
    deadline = time.time() + 90
    while max(saved_steps(model_dir), default=-1) < 4:
        assert time.time() < deadline and chief.poll() is None, "training did not start"
        time.sleep(0.2)
    worker.send_signal(signal.SIGTERM)
    (_, chief_err), (_, worker_err) = chief.communicate(timeout=120), worker.communicate(timeout=120)
    assert chief.returncode == 143 and worker.returncode == 143, chief_err[-2000:] + worker_err[-2000:]
    step = max(saved_steps(model_dir))
    assert (f"Stopped by SIGTERM, at global step {step}; the chief, which holds {model_dir}, saves "
            f"model.ckpt-{step} there. Run every host's command again to resume.") in worker_err
    assert (f"Stopped because another host of the cluster received a stop signal, at global step {step}; saved "
            f"{model_dir}/model.ckpt-{step}") in chief_err
    assert "Traceback" not in chief_err + worker_err


def test_a_lost_collective_names_the_timeout_flag():
    cluster = hosts.Cluster(None, "worker", 0, 2, collective_timeout_secs=15)
    with pytest.raises(hosts.WorkerLostError, match=r"worker:0 lost contact with the other hosts "
                                                    r"\(DeadlineExceededError: .*If no host died, one was busy for "
                                                    r"longer than --collective_timeout_secs=15 allows"):
        with cluster.reporting_lost_workers():
            raise tf.errors.DeadlineExceededError(None, None, "Collective ops timed out")
