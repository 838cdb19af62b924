"""Training across hosts with TF_CONFIG, on tf.distribute.MultiWorkerMirroredStrategy (with ps tasks in
TF_CONFIG: asynchronously, common.devices.parameter_servers).

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
import os
from typing import Optional

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import parameter_servers
from common.devices.tf_config import (  # noqa: F401 (the errors and names are this module's API too)
    EVALUATOR,
    PS,
    TASK_TYPES,
    ClusterConfigError,
    ClusterStartError,
    checked_tf_config,
    wait_for_tasks,
)


class WorkerLostError(RuntimeError):
    """A collective operation failed: another host died or cannot be reached."""


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
    serves = False  # (a parameter-server job's ps and worker tasks serve)

    def shard(self, dataset):
        return dataset

    def variable_scope(self):
        return contextlib.nullcontext()

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
    serves = False

    def variable_scope(self):
        return contextlib.nullcontext()  # variables are made on each host and kept equal

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


def from_tf_config(timeout_seconds=600, start_timeout_seconds=600):
    """A Cluster from the TF_CONFIG environment variable; a LocalCluster on one host.

    Must run before TensorFlow starts its runtime (it starts the gRPC server).
    timeout_seconds bounds every collective, so a lost host is an error, not
    a hang; start_timeout_seconds bounds the wait for the other tasks to start.
    """
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return LocalCluster()
    cluster, task_type, task_id = checked_tf_config(raw)
    if task_type == EVALUATOR:
        logging.info("The evaluator task: evaluating the chief's checkpoints as they appear")
        return EvaluatorTask()
    if PS in cluster:
        if task_type == "chief":
            wait_for_tasks(cluster, task_type, task_id, start_timeout_seconds)
        return parameter_servers.role(cluster, task_type, task_id)
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


def run_config_default():
    """RunConfig's cluster when none is given: the task's part in a parameter-server job where TF_CONFIG names ps
    tasks (tf.estimator's RunConfig read TF_CONFIG and trained those jobs with no strategy given); otherwise this
    host alone (synchronous hosts come from train_distribute, or the mains' TF_CONFIG)."""
    raw = os.environ.get("TF_CONFIG")
    if raw and PS in (checked_tf_config(raw)[0] or {}):
        return from_tf_config()
    return LocalCluster()

