"""TF_CONFIG read and checked whole, and its tasks' addresses probed before TensorFlow's servers start."""

import json
import re
import socket
import time

TASK_TYPES = ("chief", "worker")
PS = "ps"
EVALUATOR = "evaluator"
MASTER = "master"  # read as the chief


class ClusterConfigError(ValueError):
    """TF_CONFIG that does not describe a cluster this task belongs to."""


class ClusterStartError(RuntimeError):
    """Some tasks of the cluster did not start within the start-up limit."""


_ADDRESS = re.compile(r"^[A-Za-z0-9_.\-\[\]:]+:(\d{1,5})$")


def checked_tf_config(raw):
    """(cluster, task type, task index) from TF_CONFIG, checked whole: a
    ClusterConfigError names the field that is wrong, whatever the cluster's size."""
    try:
        config = json.loads(raw)
    except ValueError as error:
        raise ClusterConfigError(f"TF_CONFIG is not valid JSON: {error}") from error
    if not isinstance(config, dict):
        raise ClusterConfigError(f"TF_CONFIG must be a JSON object with cluster and task, got {raw!r}")
    cluster, task = config.get("cluster", {}), config.get("task", {})
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise ClusterConfigError(f"TF_CONFIG's cluster and task must be objects, got {raw!r}")
    if MASTER in cluster:  # TF1's name of the chief (contrib.learn's and the official examples' TF_CONFIG)
        if "chief" in cluster:
            raise ClusterConfigError("TF_CONFIG has both master and chief tasks: master is TF1's name of the chief")
        cluster = {"chief" if job == MASTER else job: addresses for job, addresses in cluster.items()}
        task = dict(task, type="chief") if task.get("type") == MASTER else task
    unknown = sorted(set(cluster) - set(TASK_TYPES + (PS,)))
    if unknown:
        raise ClusterConfigError(
            f"TF_CONFIG has {unknown} tasks; a cluster has chief, worker and (for asynchronous training) ps tasks")
    if PS in cluster and "chief" not in cluster:
        raise ClusterConfigError(
            "TF_CONFIG has ps tasks but no chief: a parameter-server job needs a chief task, which coordinates")
    for job, addresses in cluster.items():
        if not isinstance(addresses, list):
            raise ClusterConfigError(
                f"TF_CONFIG cluster.{job} must be a list of host:port addresses, got {addresses!r}")
        for index, address in enumerate(addresses):
            match = _ADDRESS.match(address) if isinstance(address, str) else None
            if not match or not 0 < int(match.group(1)) < 65536:
                raise ClusterConfigError(f"TF_CONFIG cluster.{job}[{index}] = {address!r} is not a host:port address")
    if not cluster:
        return cluster, None, 0
    task_type, task_id = task.get("type"), task.get("index", 0)
    if task_type == EVALUATOR:
        if task_id != 0:
            raise ClusterConfigError(f"TF_CONFIG task evaluator:{task_id}: there is one evaluator task, index 0")
        return cluster, task_type, task_id
    if task_type not in TASK_TYPES + (PS,):
        raise ClusterConfigError(
            f"TF_CONFIG task.type = {task_type!r} is not one of {', '.join(TASK_TYPES + (PS, EVALUATOR))}")
    if not isinstance(task_id, int) or not 0 <= task_id < len(cluster.get(task_type, [])):
        raise ClusterConfigError(
            f"TF_CONFIG task {task_type}:{task_id} is not in the cluster: it has "
            f"{len(cluster.get(task_type, []))} {task_type} task(s) ({json.dumps(cluster)})")
    return cluster, task_type, task_id


def accepts(address, seconds=1.0):
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            return True
    except OSError:
        return False


def wait_for_tasks(cluster, task_type, task_id, timeout_seconds, clock=time.monotonic, poll_seconds=0.5):
    """Waits until every other task's address accepts a TCP connection;
    ClusterStartError naming the tasks that never did once timeout_seconds pass.

    TensorFlow's own start-up wait blocks holding the GIL, with a SIGTERM
    handler of its own, so it can neither time out nor be stopped; this wait
    is Python's (a stop signal ends it at once). Meanwhile this task listens
    on its own port, so that the others' waits end too; the listener is
    closed before TensorFlow's server takes the port.
    """
    own_port = int(cluster[task_type][task_id].rsplit(":", 1)[1])
    others = {f"{job}:{index}": address for job, addresses in cluster.items()
              for index, address in enumerate(addresses) if (job, index) != (task_type, task_id)}
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("", own_port))
    listener.listen(16)
    listener.setblocking(False)
    deadline = clock() + timeout_seconds
    try:
        while True:
            others = {task: address for task, address in others.items() if not accepts(address)}
            if not others:
                return
            if clock() >= deadline:
                missing = ", ".join(f"{task} ({address})" for task, address in others.items())
                raise ClusterStartError(
                    f"{task_type}:{task_id}: the tasks {missing} of TF_CONFIG did not start within "
                    f"{timeout_seconds:g} s (--cluster_start_timeout_secs); start them, or fix TF_CONFIG")
            try:
                while True:
                    listener.accept()[0].close()
            except BlockingIOError:
                pass
            time.sleep(poll_seconds)
    finally:
        listener.close()
