"""tf.estimator.tpu's RunConfig, TPUConfig and InputPipelineConfig, as TPU programs build them.

With use_tpu=False, TPUEstimator ran on the host and the TPU settings went
unused; here likewise: the TPU fields are kept for the program to read,
and the rest is the project's RunConfig.
"""

import dataclasses
from typing import Optional

from tensorflow.compat.v1 import logging

from common.estimator.run_config import RunConfig as BaseRunConfig


class InputPipelineConfig:
    """How a TPU input pipeline was deployed (unused off a TPU)."""

    PER_SHARD_V1, PER_HOST_V1, PER_HOST_V2, BROADCAST, SLICED = 1, 2, 3, 4, 5


@dataclasses.dataclass(frozen=True)
class TPUConfig:
    """TPU settings (unused off a TPU: iterations_per_loop does not group steps here)."""

    iterations_per_loop: int = 2
    num_shards: Optional[int] = None
    num_cores_per_replica: Optional[int] = None
    per_host_input_for_training: object = True
    tpu_job_name: Optional[str] = None
    initial_infeed_sleep_secs: Optional[int] = None
    input_partition_dims: object = None
    eval_training_input_configuration: object = InputPipelineConfig.PER_HOST_V1
    experimental_host_call_every_n_steps: int = 1
    experimental_allow_per_host_v2_parallel_get_next: bool = False
    experimental_feed_hook: object = None


@dataclasses.dataclass
class TPURunConfig(BaseRunConfig):
    """The project's RunConfig with the TPU program's tpu_config kept."""

    tpu_config: TPUConfig = dataclasses.field(default_factory=TPUConfig)


class TPUClusterResolver:
    """tf.contrib.cluster_resolver.TPUClusterResolver and tf.distribute.cluster_resolver.TPUClusterResolver as TPU
    programs made them whatever --use_tpu said (TF1 took an empty name; TensorFlow 2.21's looks the TPU up and
    raises "Please provide a TPU Name to connect to." without one): kept for tpu.RunConfig, which sets it aside;
    asked for a TPU's address or cluster, it raises ValueError saying there is none."""

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker", coordinator_name=None,
                 coordinator_address=None, credentials="default", service=None, discovery_url=None):
        del job_name, coordinator_name, coordinator_address, credentials, service, discovery_url
        self.tpu, self.zone, self.project = tpu, zone, project

    def __repr__(self):
        return f"TPUClusterResolver({self.tpu!r})"

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        del task_type, task_id, rpc_layer
        raise ValueError(f"{self!r}: no TPU can be reached here; run TPUEstimator with use_tpu=False, which needs "
                         "no master")

    get_master = master
    cluster_spec = master


def RunConfig(tpu_config=None, evaluation_master=None, master=None, cluster=None, **kwargs):  # noqa: N802 (TF's name)
    """tf.estimator.tpu.RunConfig: a TPU cluster resolver cannot be honoured here (no TPU); master and
    evaluation_master name TPU workers and are ignored when empty."""
    if cluster is not None:  # (TPU programs pass theirs whatever --use_tpu says; TPUEstimator refuses use_tpu)
        logging.warning("tpu.RunConfig(cluster=%r): a TPU cluster resolver is not used here; TPUEstimator "
                        "programs run with use_tpu=False on the device plan's towers", cluster)
    for name, value in (("master", master), ("evaluation_master", evaluation_master)):
        if value:
            raise ValueError(f"tpu.RunConfig({name}={value!r}): a TPU master cannot be used here; leave it empty")
    return TPURunConfig(tpu_config=tpu_config or TPUConfig(), **kwargs)
