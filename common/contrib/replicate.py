"""tf.contrib.estimator.replicate_model_fn and TowerOptimizer: TF 1.5-1.8's in-graph towers, as this project's.

TF1's replicate_model_fn split each batch over `devices` (None: every GPU,
or the CPU where there is none), ran model_fn once per tower, and summed the
towers' gradients of their losses reduced over the whole batch: variables on
the CPU when there were several towers, on the one device otherwise.
TowerOptimizer marked the optimizer that was to do that. Here the Estimator
does exactly this with a DevicePlan: the replicated model_fn is model_fn
itself, carrying the plan its devices make, which the Estimator takes when
its RunConfig names no device_plan; TowerOptimizer is the optimizer.
"""

import functools

import tensorflow as tf

from common.devices.plan import CPU, GPU, DevicePlan

_REDUCTION = tf.compat.v1.losses.Reduction


def replicate_model_fn(model_fn, loss_reduction=_REDUCTION.SUM_BY_NONZERO_WEIGHTS, devices=None):
    """model_fn, its towers over `devices`.

    Args:
      model_fn: the Estimator's model_fn (one tower's forward pass).
      loss_reduction: how TF1 combined the towers' losses; the towers here average their gradients, which is
        TF1's for every reduction over the batch (SUM_BY_NONZERO_WEIGHTS, MEAN, SUM_OVER_BATCH_SIZE, ...).
      devices: the tower devices ("/gpu:0", ...); None: every GPU this machine has, or the CPU.
    Returns:
      model_fn (a functools.partial of it, taking its arguments) with `replicated_plan()`, the DevicePlan the
      Estimator trains with where its RunConfig gives none (the devices are listed then, not before).
    Raises:
      ValueError: loss_reduction is NONE (TF1's message); (from replicated_plan) SUM over several towers (TF1
        summed the towers' gradients unscaled: this project averages them).
    """
    if loss_reduction == _REDUCTION.NONE:
        raise ValueError(f"Tower losses need to be reduced in some way, yet {loss_reduction} reduction is "
                         "specified.")

    def replicated_plan():
        towers = tuple(devices) if devices else tuple(d.name for d in tf.config.list_logical_devices("GPU"))
        if loss_reduction == _REDUCTION.SUM and len(towers) > 1:
            raise ValueError(f"replicate_model_fn(loss_reduction=SUM) over {len(towers)} towers summed their "
                             "gradients; the towers here average them: give SUM_BY_NONZERO_WEIGHTS (the default)")
        if not towers:
            return DevicePlan.single_cpu()
        return DevicePlan(towers, CPU if len(towers) > 1 else GPU)

    replicated = functools.partial(model_fn)
    replicated.replicated_plan = replicated_plan
    return replicated


def TowerOptimizer(optimizer_or_optimizer_fn):  # noqa: N802 (TF1's class name)
    """The optimizer (or optimizer fn) given: the Estimator's towers average its gradients themselves."""
    return optimizer_or_optimizer_fn
