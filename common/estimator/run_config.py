"""`RunConfig`: how an Estimator runs, as opposed to what it computes.

Thread counts and device-placement logging must be set before TensorFlow
starts its runtime, which is earlier than any Estimator exists; they live in
`common.runtime.configure` and the mains call it first.
"""

import dataclasses
import json
import os
from typing import Optional

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import hosts, runtime, strategies
from common.devices.plan import DevicePlan

USE_DEFAULT = object()  # save_checkpoints_* not given (both None means no periodic checkpoints)


@dataclasses.dataclass
class RunConfig:
    """How an Estimator runs: checkpoints, summaries, log lines, the loop, towers and cluster, as tf.estimator's.

    Args:
      model_dir: where checkpoints and events go (the Estimator's model_dir wins; they must not differ).
      tf_random_seed: seeds weights, dropout and input_fn's unseeded random ops (a shuffle), as TF1's graph
        seed did; None: unseeded.
      save_summary_steps: write the loss, learning rate and the spec's scalars every this many steps; None or 0:
        none.
      save_checkpoints_steps: save a checkpoint every this many steps (0: no periodic checkpoints, train()
        still saves its first and last step).
      save_checkpoints_secs: or every this many seconds; neither given: every 600 s, as tf.estimator; both
        given as None: no periodic checkpoints.
      keep_checkpoint_max: how many of the newest checkpoints are kept; None or 0: all.
      keep_checkpoint_every_n_hours: also keep one checkpoint per this many hours.
      log_step_count_steps: log "loss = ..., step = N" and global_step/sec every this many steps; None or 0:
        none.
      steps_per_loop: training steps per call of the compiled loop (hooks fire between calls); None: as many
        as run in about a quarter second.
      jit_compile: compile with XLA (True/False); None: where it pays (GPU towers).
      device_plan: the towers and where variables live (common.devices.plan.DevicePlan); None: one tower on
        the CPU, or what train_distribute stands for.
      checkpoint_input_pipeline: also save the training iterator's position (shuffle buffers included) with
        each checkpoint and restore it on resume, as TF1's CheckpointInputPipelineHook did, so a resumed run
        sees exactly the batches an uninterrupted one would; checkpoints grow by the buffers.
      cluster: the hosts (common.devices.hosts), by default read from TF_CONFIG.
      train_distribute: a tf.distribute strategy, as TF 2.x estimator code gave one: it becomes the device plan
        and cluster it stands for (common.devices.strategies); input_fn's batch size is then per tower.
      eval_distribute: likewise for evaluation (one plan serves every mode).
      experimental_distribute: TF 1.x's DistributeConfig (common.devices.strategies.DistributeConfig): its
        train_distribute and eval_distribute are taken as those two.
      session_config: a TF1 ConfigProto: its thread counts (while TensorFlow's runtime has not started; else
        named in a warning), device-placement logging and soft placement are applied.
    Raises:
      ValueError: both save_checkpoints_steps and _secs, a negative count, steps_per_loop below 1, or both
        device_plan and a strategy, or experimental_distribute and a strategy; a strategy's GPUs that this
        machine lacks and cannot run on logical CPU devices instead; TF_CONFIG that is not JSON (when a
        cluster property is read).

    The cluster properties tf.estimator's RunConfig had (task_type, task_id, is_chief, num_worker_replicas,
    num_ps_replicas, master, cluster_spec, global_id_in_cluster, ...) are read from TF_CONFIG as it read them.
    """

    model_dir: Optional[str] = None
    tf_random_seed: Optional[int] = None
    save_summary_steps: Optional[int] = 100
    save_checkpoints_steps: Optional[int] = USE_DEFAULT
    save_checkpoints_secs: Optional[float] = USE_DEFAULT
    keep_checkpoint_max: Optional[int] = 5
    keep_checkpoint_every_n_hours: float = 10000.0
    log_step_count_steps: Optional[int] = 100
    steps_per_loop: Optional[int] = None  # None: as many steps a call as the hooks allow (train_loop)
    jit_compile: Optional[bool] = None  # None: XLA where it pays (decided by DevicePlan.compiled_unit)
    device_plan: Optional[DevicePlan] = None
    checkpoint_input_pipeline: bool = False
    cluster: object = dataclasses.field(default_factory=hosts.run_config_default)  # hosts (TF_CONFIG)
    train_distribute: object = None
    eval_distribute: object = None
    session_config: object = None
    experimental_distribute: object = None

    def __post_init__(self):
        if self.experimental_distribute is not None:
            given = self.experimental_distribute
            for name in ("train_distribute", "eval_distribute"):
                if getattr(self, name) not in (None, getattr(given, name)):  # (replace() gives back what it took)
                    raise ValueError(f"RunConfig: give experimental_distribute or {name}, not both")
                setattr(self, name, getattr(given, name))
        if self.train_distribute is not None or self.eval_distribute is not None:
            plan, self.cluster = strategies.plan_and_cluster(self.train_distribute, self.eval_distribute)
            if self.device_plan not in (None, plan):  # (replace() gives back the plan it made)
                raise ValueError("RunConfig: give device_plan or train_distribute/eval_distribute, not both")
            self.device_plan = plan
            logging.info("Towers from the RunConfig strategy: %s; variables on %s",
                         ", ".join(self.device_plan.tower_devices), ", ".join(self.device_plan.variable_devices))
        if self.session_config is not None:
            not_applied = runtime.apply_session_config(self.session_config)
            if not_applied:
                logging.warning("RunConfig(session_config=...): %s not applied, TensorFlow's runtime has started; "
                                "set threads with common.runtime.configure(...) before TensorFlow starts",
                                ", ".join(not_applied))
        if self.save_checkpoints_steps is USE_DEFAULT and self.save_checkpoints_secs is USE_DEFAULT:
            self.save_checkpoints_secs = 600
        for name in ("save_checkpoints_steps", "save_checkpoints_secs"):
            if getattr(self, name) is USE_DEFAULT:
                setattr(self, name, None)
            elif getattr(self, name) == 0:  # (TF1's "disable", as programs' flags say; as None here)
                logging.info("RunConfig(%s=0): no periodic checkpoints; train() saves its first and last step",
                             name)
                setattr(self, name, None)
        if self.save_checkpoints_steps is not None and self.save_checkpoints_secs is not None:
            raise ValueError(
                "RunConfig: give save_checkpoints_steps or save_checkpoints_secs, not both "
                f"(got {self.save_checkpoints_steps} and {self.save_checkpoints_secs})"
            )
        for name in ("save_summary_steps", "keep_checkpoint_max", "log_step_count_steps"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"RunConfig: {name} must be >= 0 or None, got {value}")
        for name in ("save_checkpoints_steps", "save_checkpoints_secs"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"RunConfig: {name} must be > 0 (0: no periodic checkpoints) or None, got {value}")
        if self.steps_per_loop is not None and self.steps_per_loop < 1:
            raise ValueError(f"RunConfig: steps_per_loop must be >= 1 or None, got {self.steps_per_loop}")
        if self.device_plan is None:
            self.device_plan = DevicePlan.single_cpu()

    # ------------------------------------------- tf.estimator's cluster properties, from TF_CONFIG
    @property
    def _tf_config(self):
        raw = os.environ.get("TF_CONFIG") or "{}"
        try:
            config = json.loads(raw)
        except ValueError as error:
            raise ValueError(f"RunConfig: TF_CONFIG is not valid JSON ({error}): {raw!r}") from error
        if not isinstance(config, dict):
            return {}
        if (config.get("task") or {}).get("type") == hosts.EVALUATOR:  # outside the training cluster
            return {"task": config["task"]}
        return config

    @property
    def cluster_spec(self):
        """TF_CONFIG's cluster, a tf.train.ClusterSpec (empty on one host)."""
        return tf.train.ClusterSpec(self._tf_config.get("cluster") or {})

    @property
    def task_type(self):
        """TF_CONFIG's task type ("chief", "worker", "ps", "evaluator"; "worker" without TF_CONFIG)."""
        return (self._tf_config.get("task") or {}).get("type") or "worker"

    @property
    def task_id(self):
        """TF_CONFIG's task index (0 without TF_CONFIG)."""
        return int((self._tf_config.get("task") or {}).get("index", 0))

    @property
    def num_ps_replicas(self):
        """The number of ps tasks in TF_CONFIG."""
        return len((self._tf_config.get("cluster") or {}).get("ps", []))

    @property
    def num_worker_replicas(self):
        """The chief and worker tasks in TF_CONFIG (1 on one host, 0 for the evaluator)."""
        cluster = self._tf_config.get("cluster") or {}
        if self.task_type == hosts.EVALUATOR:
            return 0
        return max(1, len(cluster.get("chief", [])) + len(cluster.get("worker", [])))

    @property
    def is_chief(self):
        """Whether this task keeps the checkpoints: the chief, or worker 0 of a cluster without one."""
        cluster = self._tf_config.get("cluster") or {}
        if self.task_type == hosts.EVALUATOR:
            return False
        if not cluster:
            return True
        if "chief" in cluster:
            return self.task_type == "chief"
        return self.task_type in ("worker", "master") and self.task_id == 0

    @property
    def master(self):
        """This task's grpc address ('' on one host and for the evaluator), as tf.estimator gave it."""
        cluster = self._tf_config.get("cluster") or {}
        addresses = cluster.get(self.task_type, [])
        return f"grpc://{addresses[self.task_id]}" if self.task_id < len(addresses) else ""

    @property
    def evaluation_master(self):
        """'' as tf.estimator gave it in TF 2: the evaluation runs in this process."""
        return ""

    @property
    def global_id_in_cluster(self):
        """This task's index over the cluster's tasks: chief first, then workers, then the other jobs by
        name (None for a task outside the cluster, the evaluator)."""
        cluster = self._tf_config.get("cluster") or {}
        if self.task_type == hosts.EVALUATOR:
            return None
        if not cluster:
            return 0
        jobs = [j for j in ("chief", "worker") if j in cluster] + sorted(set(cluster) - {"chief", "worker"})
        if self.task_type not in jobs:
            return None
        return sum(len(cluster[j]) for j in jobs[:jobs.index(self.task_type)]) + self.task_id

    @property
    def device_fn(self):
        """None: variables are placed by the device plan (--variable_strategy), not a device function."""
        return None  # variables are placed by the device plan (--variable_strategy)

    @property
    def protocol(self):
        """None: the cluster's transport is TensorFlow's default."""
        return None

    @property
    def service(self):
        """None: TF_CONFIG's "service" field is not used."""
        return None

    @property
    def batch_per_replica(self):
        """Whether input_fn's batches are per tower, as tf.estimator's were
        under a distribution strategy (otherwise the towers split each batch)."""
        return self.train_distribute is not None or self.eval_distribute is not None

    def as_tf_estimator_logged_it(self):
        """The config as tf.estimator's "Using config: {...}" line showed it: its attributes' names and order.

        Returns:
          {"_model_dir": ..., "_tf_random_seed": ..., ..., "_num_worker_replicas": ...}.
        """
        return {"_model_dir": self.model_dir, "_tf_random_seed": self.tf_random_seed,
                "_save_summary_steps": self.save_summary_steps, "_save_checkpoints_steps": self.save_checkpoints_steps,
                "_save_checkpoints_secs": self.save_checkpoints_secs, "_session_config": self.session_config,
                "_keep_checkpoint_max": self.keep_checkpoint_max,
                "_keep_checkpoint_every_n_hours": self.keep_checkpoint_every_n_hours,
                "_log_step_count_steps": self.log_step_count_steps, "_train_distribute": self.train_distribute,
                "_device_fn": self.device_fn, "_protocol": self.protocol, "_eval_distribute": self.eval_distribute,
                "_experimental_distribute": self.experimental_distribute, "_experimental_max_worker_delay_secs": None,
                "_session_creation_timeout_secs": 7200, "_checkpoint_save_graph_def": True, "_service": self.service,
                "_cluster_spec": self.cluster_spec, "_task_type": self.task_type, "_task_id": self.task_id,
                "_global_id_in_cluster": self.global_id_in_cluster, "_master": self.master,
                "_evaluation_master": self.evaluation_master, "_is_chief": self.is_chief,
                "_num_ps_replicas": self.num_ps_replicas, "_num_worker_replicas": self.num_worker_replicas}

    def replace(self, **changes):
        """A copy with some fields changed, as tf.estimator's RunConfig.replace: giving one of
        save_checkpoints_steps and _secs clears the other.

        Args:
          **changes: field name -> new value (the fields of the constructor).
        Returns:
          The new RunConfig (checked as a new one is).
        """
        pair = ("save_checkpoints_steps", "save_checkpoints_secs")
        for given, other in (pair, pair[::-1]):
            if given in changes and other not in changes:
                changes[other] = None
        return dataclasses.replace(self, **changes)
