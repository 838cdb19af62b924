"""tf.compat.v1.train.replica_device_setter, where a program calls it without parameter-server tasks.

TF1 programs built their towers in one graph inside `tf.device(setter)`,
the setter placing variables on ps tasks. With no ps tasks (ps_tasks 0 and
no ps job in the cluster) TF1's function returned None, and `tf.device(None)`
placed nothing beyond the program's own device scopes: a one-host program
ran so. Here a parameter-server job places its variables itself, from the ps
tasks TF_CONFIG names (RunConfig reads it), so a setter with ps tasks is
refused, naming them.
"""

import tensorflow as tf


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """None, as TF1 returned without ps tasks; the other arguments (a worker device, a ps strategy) placed
    nothing then and place nothing here.

    Args:
      ps_tasks: the count of ps tasks (TF1's argument); 0 here.
      ps_device: the ps job's device; its job names the ps tasks in `cluster`.
      worker_device, merge_devices, ps_ops, ps_strategy: TF1's, unused without ps tasks.
      cluster: a tf.train.ClusterSpec (or its dict), or None; its ps job must have no tasks.
    Returns:
      None: `tf.device(None)` keeps the program's own device scopes.
    Raises:
      ValueError: ps tasks are given, with their count and what to do instead.
    """
    if cluster is not None:
        job = tf.DeviceSpec.from_string(ps_device or "/job:ps").job or "ps"
        spec = cluster if isinstance(cluster, tf.train.ClusterSpec) else tf.train.ClusterSpec(cluster)
        ps_tasks = len(spec.as_dict().get(job, ()))
    if ps_tasks:
        raise ValueError(f"replica_device_setter: {ps_tasks} ps task(s): a parameter-server job places its "
                         "variables itself here; name the ps tasks in TF_CONFIG (RunConfig() reads it) and drop "
                         "the device setter")
    return None
