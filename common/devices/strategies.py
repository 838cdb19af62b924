"""tf.distribute strategies given to RunConfig, as TF 2.x estimator code did.

`RunConfig(train_distribute=tf.distribute.MirroredStrategy(...))` was how
tf.estimator users asked for several GPUs. The project's towers are that
strategy's replicas, so each strategy is read for its devices and becomes a
device plan (and, across hosts, the project's cluster):

- MirroredStrategy(devices): a tower per device, variables spread over them
  (each variable's gradients averaged on its device);
- OneDeviceStrategy(device): one tower there, its variables with it;
- CentralStorageStrategy: a tower per compute device, variables on the CPU;
- MultiWorkerMirroredStrategy: a tower per local device, the hosts of its
  cluster resolver (TF_CONFIG) as the project's cluster.

A strategy naming GPUs this machine lacks runs its towers on logical CPU
devices, said in a warning (TF1's soft placement put them on the CPU
silently). TF 1.x contrib's MirroredStrategy, CollectiveAllReduceStrategy
and DistributeConfig are here too, as the upgrade names them.

Strategies that cannot be mapped (TPUs; parameter servers, which TF_CONFIG's ps tasks give
RunConfig() without a strategy) are refused by name.
"""

import collections
import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import hosts
from common.devices.plan import CPU, GPU, HOST_DEVICE, DevicePlan
from common.devices.tf_config import TASK_TYPES, checked_tf_config

_REFUSED = {
    "TPUStrategy": "TPUs are not supported here; train on GPUs with MirroredStrategy or --num_gpus",
    "ParameterServerStrategy": "leave train_distribute out: with ps tasks in TF_CONFIG, RunConfig() trains "
                               "asynchronously on the parameter servers itself (common.devices.parameter_servers); "
                               "CentralStorageStrategy puts the variables on the CPU of one host",
}


def _short_device(name):
    spec = tf.DeviceSpec.from_string(name)
    return f"/{spec.device_type.lower()}:{spec.device_index or 0}"


def _class_names(strategy):
    return [cls.__name__ for cls in type(strategy).__mro__]


def _refuse_if_unmapped(strategy, field):
    for name in _class_names(strategy):
        for refused, why in _REFUSED.items():
            if name.startswith(refused):
                raise ValueError(f"RunConfig({field}={type(strategy).__name__}): {why}")


def _is(strategy, *names):
    return any(name in names for name in _class_names(strategy))


def device_plan(strategy, field="train_distribute"):
    """The DevicePlan that stands for `strategy`'s replicas on this host."""
    _refuse_if_unmapped(strategy, field)
    if _is(strategy, "_DefaultDistributionStrategy"):
        return DevicePlan.single_cpu()
    if _is(strategy, "CentralStorageStrategy"):
        parameter_devices = strategy.extended.parameter_devices
        variable_strategy = CPU if all("CPU" in d.upper() for d in parameter_devices) else GPU
    elif _is(strategy, "MirroredStrategy", "MirroredStrategyV1", "CollectiveAllReduceStrategy",
             "OneDeviceStrategy", "OneDeviceStrategyV1"):
        devices = tuple(_short_device(d) for d in strategy.extended.worker_devices)
        variable_strategy = CPU if devices == (HOST_DEVICE,) else GPU
    else:
        raise ValueError(
            f"RunConfig({field}={type(strategy).__name__}): not a strategy this project can map onto towers; "
            "use MirroredStrategy, OneDeviceStrategy, CentralStorageStrategy or MultiWorkerMirroredStrategy")
    devices = _on_this_machine(tuple(_short_device(d) for d in strategy.extended.worker_devices), strategy, field)
    return DevicePlan(devices, variable_strategy)


def _on_this_machine(devices, strategy, field):
    """`devices`, or, where they name more GPUs than this machine has, as many logical CPU devices (said in a
    warning: TF1's soft placement ran such towers on the CPU, silently).

    Raises:
      ValueError: too few GPUs and too few logical CPU devices to stand in for them, naming the numbers.
    """
    wanted = [device for device in devices if device.startswith("/gpu:")]
    if not wanted:
        return devices
    found = len(tf.config.list_logical_devices("GPU"))
    if max(int(device.split(":")[1]) for device in wanted) < found:
        return devices
    cpus = len(tf.config.list_logical_devices("CPU"))
    asked = f"RunConfig({field}={type(strategy).__name__}) asks for towers on {', '.join(devices)}"
    if cpus < len(devices):
        raise ValueError(f"{asked}, and this machine has {found} GPU(s) and {cpus} logical CPU device(s) to stand "
                         f"in for them: give the strategy the devices this machine has, or make {len(devices)} "
                         f"logical CPU devices with common.runtime.configure(cpu_towers={len(devices)}) before "
                         "TensorFlow starts")
    instead = tuple(f"/cpu:{index}" for index in range(len(devices)))
    logging.warning("%s, and this machine has %d GPU(s): they run as towers on the logical CPU devices %s",
                    asked, found, ", ".join(instead))
    return instead


def cluster(strategy):
    """The project's cluster for `strategy`: its hosts for a multi-worker one, else this host alone."""
    if not _is(strategy, "CollectiveAllReduceStrategy"):
        return hosts.LocalCluster()
    resolver = strategy.cluster_resolver
    spec = resolver.cluster_spec().as_dict()
    num_workers = sum(len(spec.get(task_type, [])) for task_type in hosts.TASK_TYPES)
    if num_workers <= 1:
        return hosts.LocalCluster()
    return hosts.Cluster(strategy, resolver.task_type, resolver.task_id, num_workers)


def MirroredStrategy(devices=None, num_gpus=None, num_gpus_per_worker=None, cross_device_ops=None,  # noqa: N802
                     auto_shard_dataset=False, cross_tower_ops=None):
    """tf.contrib.distribute.MirroredStrategy (TensorFlow 1.11-1.14, the official models' distribution_utils):
    its devices, or `num_gpus` GPUs, as tf.distribute.MirroredStrategy's (whose replicas are the towers)."""
    del auto_shard_dataset  # (input_fn's dataset is split over the towers by the framework)
    count = num_gpus or num_gpus_per_worker
    if devices is None and count:
        devices = [f"/gpu:{index}" for index in range(count)]
    return tf.distribute.MirroredStrategy(devices, cross_device_ops=cross_device_ops or cross_tower_ops)


def CollectiveAllReduceStrategy(num_gpus_per_worker=0, communication=None):  # noqa: N802 (contrib's name)
    """tf.contrib.distribute.CollectiveAllReduceStrategy (TensorFlow 1.12-1.14): synchronous all-reduce over the
    workers of TF_CONFIG with `num_gpus_per_worker` GPUs each, as tf.distribute.MultiWorkerMirroredStrategy's,
    which takes every GPU of a worker.

    Args:
      num_gpus_per_worker: GPU towers per worker (0: the CPU).
      communication: a tf.distribute.experimental.CollectiveCommunication; None: AUTO.

    Returns:
      tf.distribute.MultiWorkerMirroredStrategy; on one worker whose GPUs are fewer than asked for, a
      MirroredStrategy of those GPU names (RunConfig runs it as towers on logical CPU devices, or refuses it).

    Raises:
      ValueError: num_gpus_per_worker is not a count of this machine's GPUs that MultiWorkerMirroredStrategy
        can take (it takes all of them), naming both numbers.
    """
    found = len(tf.config.list_logical_devices("GPU"))
    raw = os.environ.get("TF_CONFIG")
    workers = sum(len(jobs) for job, jobs in (checked_tf_config(raw)[0] if raw else {}).items() if job in TASK_TYPES)
    if num_gpus_per_worker > found and workers <= 1:
        return tf.distribute.MirroredStrategy([f"/gpu:{index}" for index in range(num_gpus_per_worker)])
    if num_gpus_per_worker != found:
        raise ValueError(f"CollectiveAllReduceStrategy(num_gpus_per_worker={num_gpus_per_worker}): this worker has "
                         f"{found} GPU(s), and tf.distribute.MultiWorkerMirroredStrategy takes all of them; make "
                         f"{num_gpus_per_worker} visible (CUDA_VISIBLE_DEVICES) or ask for {found}")
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=communication or tf.distribute.experimental.CommunicationImplementation.AUTO)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


class DistributeConfig(collections.namedtuple("DistributeConfig",
                                              ("train_distribute", "eval_distribute", "remote_cluster"))):
    """tf.contrib.distribute.DistributeConfig, given to RunConfig(experimental_distribute=...): its strategies are
    RunConfig's train_distribute and eval_distribute.

    Raises:
      ValueError: remote_cluster given (a standalone client driving a remote cluster is not run here).
    """

    def __new__(cls, train_distribute=None, eval_distribute=None, remote_cluster=None):
        if remote_cluster is not None:
            raise ValueError(f"DistributeConfig(remote_cluster={remote_cluster!r}): a standalone client driving a "
                             "remote cluster is not run here; run the program on every worker with TF_CONFIG "
                             "naming the cluster")
        return super().__new__(cls, train_distribute, eval_distribute, remote_cluster)


def AllReduceCrossDeviceOps(all_reduce_alg="nccl", num_packs=1):  # noqa: N802
    """tf.contrib.distribute.AllReduceCrossDeviceOps (TensorFlow 1.12's AllReduceCrossTowerOps): tf.distribute's
    all-reduce of that name, for a MirroredStrategy that only gives the towers here (each variable's gradients
    are averaged on its own device, whatever the strategy's cross-device ops)."""
    if all_reduce_alg == "hierarchical_copy":
        return tf.distribute.HierarchicalCopyAllReduce(num_packs)
    if all_reduce_alg == "nccl":
        return tf.distribute.NcclAllReduce(num_packs)
    raise ValueError(f"AllReduceCrossDeviceOps(all_reduce_alg={all_reduce_alg!r}): 'nccl' or 'hierarchical_copy'")


def plan_and_cluster(train_distribute, eval_distribute):
    """(DevicePlan, cluster) for RunConfig's strategies. One plan serves every
    mode here, so an eval_distribute must give the same towers."""
    strategy = train_distribute if train_distribute is not None else eval_distribute
    field = "train_distribute" if train_distribute is not None else "eval_distribute"
    plan = device_plan(strategy, field)
    if train_distribute is not None and eval_distribute is not None:
        eval_plan = device_plan(eval_distribute, "eval_distribute")
        if eval_plan != plan:
            raise ValueError(
                f"RunConfig: eval_distribute runs on {eval_plan.tower_devices} but train_distribute on "
                f"{plan.tower_devices}; here one set of towers serves training, evaluation and prediction: "
                "give the same strategy (or leave eval_distribute out)")
    return plan, cluster(strategy)
