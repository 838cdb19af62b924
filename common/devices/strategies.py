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

Strategies that cannot be mapped (TPUs; parameter servers, which TF_CONFIG's ps tasks give
RunConfig() without a strategy) are refused by name.
"""

import tensorflow as tf

from common.devices import hosts
from common.devices.plan import CPU, GPU, HOST_DEVICE, DevicePlan

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
    return DevicePlan(tuple(_short_device(d) for d in strategy.extended.worker_devices), variable_strategy)


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
