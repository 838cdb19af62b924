"""Training across hosts with TF_CONFIG, on tf.distribute.MultiWorkerMirroredStrategy.

Each host (a `chief` or `worker` task of TF_CONFIG) runs its towers as on
one machine and averages their gradients; the per-host averages are then
all-reduced across hosts with the strategy's collective all-reduce
(MultiWorkerMirroredStrategy, one CPU replica per host), so every host
applies the same update. The towers stay ours rather than becoming the
strategy's local replicas: that keeps one code path for one host and many,
keeps --variable_strategy, and puts only one all-reduce per step on the
network. Batch-norm statistics and the reported loss are all-reduced too,
and before training every variable is broadcast from the chief, so hosts
start and stay identical.

Input: each host reads the whole input_fn and keeps every N-th batch
(batch i goes to host i mod N), so per-host input pipelines must yield the
same batch sequence (seed their shuffles). The global batch is the per-host
batch times the number of hosts; the global step counts global batches.
Only the chief writes to model_dir; the others write to a temporary
directory they remove when training ends.

A cluster object always exists: one host is a `LocalCluster`, a cluster of
one whose all-reduce is the identity and which is always the chief, so no
caller asks whether there is a cluster.
"""

import contextlib
import dataclasses
import json
import os
import re
import socket
import time
from typing import Optional

import tensorflow as tf
from absl import logging

TASK_TYPES = ("chief", "worker")
EVALUATOR = "evaluator"


class ClusterConfigError(ValueError):
    """TF_CONFIG that does not describe a chief/worker cluster this task belongs to."""


class WorkerLostError(RuntimeError):
    """A collective operation failed: another host died or cannot be reached."""


class ClusterStartError(RuntimeError):
    """Some tasks of the cluster did not start within the start-up limit."""


_COLLECTIVE_FAILURES = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                        tf.errors.CancelledError, tf.errors.InternalError, tf.errors.AbortedError)


class LocalCluster:
    """One host: the chief of a cluster of one; every cross-host operation is the identity."""

    task_type = "chief"
    task_id = 0
    num_workers = 1
    worker_index = 0
    is_chief = True
    is_evaluator = False

    def shard(self, dataset):
        return dataset

    def all_reduce(self, values, op=tf.distribute.ReduceOp.MEAN):
        return list(values)

    def broadcast_from_chief(self, variables):
        pass

    def reporting_lost_workers(self):
        return contextlib.nullcontext()


class EvaluatorTask(LocalCluster):
    """TF_CONFIG's evaluator task (outside the training cluster, as in tf.estimator):
    train_and_evaluate evaluates the chief's checkpoints as they appear
    (common.evaluator) and trains nothing."""

    task_type = EVALUATOR
    is_chief = False
    is_evaluator = True


@dataclasses.dataclass
class Cluster:
    strategy: tf.distribute.Strategy
    task_type: str
    task_id: int
    num_workers: int
    collective_timeout_secs: Optional[float] = None  # what bounds each collective (--collective_timeout_secs)
    is_evaluator = False

    @property
    def is_chief(self):
        return self.worker_index == 0

    @property
    def worker_index(self):
        """0 for the chief, then the workers in order."""
        has_chief = "chief" in self.strategy.cluster_resolver.cluster_spec().jobs
        if self.task_type == "chief":
            return 0
        return self.task_id + (1 if has_chief else 0)

    def shard(self, dataset):
        """This host's batches: every num_workers-th, starting at its index."""
        return dataset.shard(self.num_workers, self.worker_index)

    def all_reduce(self, values, op=tf.distribute.ReduceOp.MEAN):
        """The cross-host reduction of a list of tensors (inside or outside tf.function)."""
        values = [tf.convert_to_tensor(value) for value in values]
        groups = {}
        for index, value in enumerate(values):  # one packed collective per dtype
            groups.setdefault(value.dtype, []).append(index)

        def reduce(*tensors):
            context = tf.distribute.get_replica_context()
            # identity places each tensor on the replica's device, which the
            # collective takes as its destination
            tensors = [tf.identity(t) for t in tensors]
            reduced = [None] * len(tensors)
            for indices in groups.values():
                for index, value in zip(indices, context.all_reduce(op, [tensors[i] for i in indices])):
                    reduced[index] = value
            return reduced

        with self.strategy.scope():
            return self.strategy.run(reduce, args=tuple(values))

    def broadcast_from_chief(self, variables):
        """Gives every host the chief's values of `variables`."""
        variables = list(variables)
        chief = self.is_chief

        @tf.function(autograph=False)
        def sync():
            shares = [tf.identity(v) if chief else tf.zeros_like(v) for v in variables]
            for variable, value in zip(variables, self.all_reduce(shares, tf.distribute.ReduceOp.SUM)):
                variable.assign(value)

        sync()

    @contextlib.contextmanager
    def reporting_lost_workers(self):
        """Turns a failed collective into WorkerLostError."""
        try:
            yield
        except _COLLECTIVE_FAILURES as error:
            first_line = error.message.splitlines()[0] if error.message else ""
            busy = "" if self.collective_timeout_secs is None else (
                f" If no host died, one was busy for longer than --collective_timeout_secs="
                f"{self.collective_timeout_secs:g} allows (the chief evaluating or exporting in-line, a slow "
                "input): raise that flag.")
            raise WorkerLostError(
                f"{self.task_type}:{self.task_id} lost contact with the other hosts "
                f"({type(error).__name__}: {first_line}). "
                f"Restart every worker with the same command to resume from the chief's last checkpoint.{busy}"
            ) from error


_ADDRESS = re.compile(r"^[A-Za-z0-9_.\-\[\]:]+:(\d{1,5})$")


def _checked_tf_config(raw):
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
    unknown = sorted(set(cluster) - set(TASK_TYPES))
    if unknown:
        raise ClusterConfigError(
            f"TF_CONFIG has {unknown} tasks; only synchronous chief/worker clusters are supported "
            "(asynchronous parameter-server training is not)")
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
    if task_type not in TASK_TYPES:
        raise ClusterConfigError(
            f"TF_CONFIG task.type = {task_type!r} is not one of {', '.join(TASK_TYPES + (EVALUATOR,))}")
    if not isinstance(task_id, int) or not 0 <= task_id < len(cluster.get(task_type, [])):
        raise ClusterConfigError(
            f"TF_CONFIG task {task_type}:{task_id} is not in the cluster: it has "
            f"{len(cluster.get(task_type, []))} {task_type} task(s) ({json.dumps(cluster)})")
    return cluster, task_type, task_id


def _accepts(address, seconds=1.0):
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
            others = {task: address for task, address in others.items() if not _accepts(address)}
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


def from_tf_config(timeout_seconds=600, start_timeout_seconds=600):
    """A Cluster from the TF_CONFIG environment variable; a LocalCluster on one host.

    Must run before TensorFlow starts its runtime (it starts the gRPC server).
    timeout_seconds bounds every collective, so a lost host is an error, not
    a hang; start_timeout_seconds bounds the wait for the other tasks to start.
    """
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return LocalCluster()
    cluster, task_type, task_id = _checked_tf_config(raw)
    if task_type == EVALUATOR:
        logging.info("The evaluator task: evaluating the chief's checkpoints as they appear")
        return EvaluatorTask()
    num_workers = sum(len(cluster.get(t, [])) for t in TASK_TYPES)
    if num_workers <= 1:
        return LocalCluster()
    wait_for_tasks(cluster, task_type, task_id, start_timeout_seconds)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id, num_accelerators={},
        rpc_layer="grpc")
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver, communication_options=options)
    logging.info("Worker %s:%d of %d hosts", task_type, task_id, num_workers)
    return Cluster(strategy, task_type, task_id, num_workers, timeout_seconds)
