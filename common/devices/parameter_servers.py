"""Parameter-server clusters (TF_CONFIG with `ps` tasks), trained asynchronously on ParameterServerStrategy.

tf.estimator trained such a job between-graph: every worker built the model
with its variables on the ps tasks and applied its own updates, none
waiting for another. TensorFlow 2.21 keeps that engine as
tf.distribute.ParameterServerStrategy with a ClusterCoordinator: here the
chief builds the model once, under the strategy's scope (so its variables
land on the ps tasks, round-robin), and schedules each step on whichever
worker is free; that worker reads its own shard of input_fn's data, runs
the towers on its devices and applies the update to the ps variables. The
ps and worker tasks only serve: the same program on them reaches train()
and serves there until the chief has ended (ServingTask).

A serving task serves for as long as the chief's process runs (after
training the chief evaluates and exports on the variables the ps tasks
hold); the chief writes DONE_FILE in model_dir when training ends, so a
serving task whose chief is gone ends cleanly where that file is newer
than its own start, and with ChiefLostError where not (the chief died).
"""

import contextlib
import os
import re
import time

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import tf_config

DONE_FILE = "parameter_server_job.done"
_LOST_TASK = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")


class ParameterServerLostError(RuntimeError):
    """A ps task stopped answering: the variables it held are gone, so the job stops."""


class ChiefLostError(RuntimeError):
    """A serving task's chief stopped answering before it said training had ended."""


class ParameterServerCluster:
    """The chief of a parameter-server job: coordinates; variables on the ps tasks; steps on the workers."""

    task_type = "chief"
    task_id = 0
    worker_index = 0
    num_workers = 1  # hosts that step together: none here, each worker steps alone
    is_chief = True
    is_evaluator = False
    serves = False

    def __init__(self, strategy, worker_tasks):
        self.strategy = strategy
        self.coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        self.worker_tasks = worker_tasks

    def shard(self, dataset):
        return dataset  # each worker shards its own dataset (common.estimator.scheduled_steps)

    def all_reduce(self, values, op=tf.distribute.ReduceOp.MEAN):
        return list(values)  # asynchronous: each worker applies its own update

    def broadcast_from_chief(self, variables):
        pass  # one copy of each variable, on the ps tasks

    @contextlib.contextmanager
    def variable_scope(self):
        """The strategy's scope, as its one replica (TF1 metrics and optimizers in model_fn merge across replicas
        there, as they would in a step it runs)."""
        with self.strategy.scope(), tf.distribute.ReplicaContext(self.strategy, replica_id_in_sync_group=0):
            yield

    @contextlib.contextmanager
    def reporting_lost_workers(self):
        """A ps task that stops answering ends the job (a worker's failures the coordinator retries)."""
        try:
            yield
        except (tf.errors.UnavailableError, tf.errors.CancelledError, tf.errors.AbortedError) as error:
            tasks = sorted({f"{job}:{index}" for job, index in _LOST_TASK.findall(error.message or "")})
            ps_tasks = [task for task in tasks if task.startswith("ps:")]  # (a worker relays a ps task's failure)
            named = ", ".join(ps_tasks or tasks) or "a task"
            raise ParameterServerLostError(
                f"the parameter-server job lost {named} ({type(error).__name__}); the variables on a "
                "ps task are gone with it: restart every task with the same command to resume from the chief's "
                "last checkpoint") from error

    def finish(self, model_dir, how):
        """Tells the serving tasks that training has ended, and `how` (they log it)."""
        with open(os.path.join(model_dir, DONE_FILE), "w") as done:
            done.write(how + "\n")


class ServingTask:
    """A ps or worker task of a parameter-server job: serves the chief's variables or steps until it ends."""

    is_chief = False
    is_evaluator = False
    serves = True
    num_workers = 1

    def __init__(self, cluster, task_type, task_id):
        self.cluster, self.task_type, self.task_id = cluster, task_type, task_id

    def serve(self, model_dir):
        """Runs this task's server for as long as the chief runs (it may evaluate and export on the ps tasks'
        variables after training); ChiefLostError if the chief ended without saying training had ended."""
        started = time.time()
        tf.distribute.Server(tf.train.ClusterSpec(self.cluster), job_name=self.task_type, task_index=self.task_id,
                             protocol="grpc", start=True)
        logging.info("%s:%d serves the parameter-server job's chief for as long as it runs", self.task_type,
                     self.task_id)
        how = self.wait_for_the_chief(model_dir, started)
        logging.info("The chief has ended (%s): %s:%d stops serving", how, self.task_type, self.task_id)

    def wait_for_the_chief(self, model_dir, started, poll_seconds=0.5, patience=6):
        """Returns what the chief wrote to DONE_FILE (at or after `started`, a time.time()) once it has stopped
        answering (`patience` polls in a row, after it was seen); ChiefLostError where it stopped without."""
        chief = self.cluster["chief"][0]
        seen, silent = False, 0
        while silent < patience:
            if tf_config.accepts(chief):
                seen, silent = True, 0
            elif seen:
                silent += 1
            time.sleep(poll_seconds)
        done = os.path.join(model_dir, DONE_FILE)
        if not (os.path.exists(done) and os.path.getmtime(done) >= started - 1):
            raise ChiefLostError(
                f"{self.task_type}:{self.task_id}: the chief ({chief}) stopped answering before training ended "
                f"(no new {DONE_FILE} in {model_dir}); restart every task with the same command to resume from "
                "its last checkpoint")
        with open(done) as said:
            return said.read().strip()


_ROLES = {}


def role(cluster, task_type, task_id):
    """This task's part in the job TF_CONFIG describes (one per process and TF_CONFIG: the strategy and
    servers it makes cannot be made twice)."""
    key = (repr(sorted((job, tuple(addresses)) for job, addresses in cluster.items())), task_type, task_id)
    if key not in _ROLES:
        _ROLES[key] = _make_role(cluster, task_type, task_id)
    return _ROLES[key]


def _make_role(cluster, task_type, task_id):
    if task_type != "chief":
        return ServingTask(cluster, task_type, task_id)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type="chief", task_id=0, rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    worker_tasks = len(cluster.get("worker", []))
    logging.info("The chief of a parameter-server job: variables on %d ps task(s), steps on %d worker(s)",
                 len(cluster["ps"]), worker_tasks)
    return ParameterServerCluster(strategy, worker_tasks)
