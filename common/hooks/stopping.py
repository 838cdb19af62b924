"""Hooks that stop training: at a step, or when the loss is not finite."""

import math

import numpy as np
import tensorflow as tf
from absl import logging

from common.hooks.protocol import Hook, value_name


class NanLossDuringTrainingError(tf.compat.v1.train.NanLossDuringTrainingError):
    """The loss became NaN or infinite; the step is in the message. A
    tf.compat.v1.train.NanLossDuringTrainingError (and a RuntimeError), so
    estimator code's `except` clauses catch it."""

    def __init__(self, step, loss):
        super().__init__(
            f"Model diverged with loss = {loss} at global step {step} (a step whose loss or any "
            "gradient is not finite reports a NaN loss). The last checkpoint in model_dir was "
            "written before this step."
        )
        self.step = step

    def __str__(self):  # the TF1 class says only "NaN loss during training."
        return self.args[0]



class NanTensorHook(Hook):
    """Stops training when the loss is NaN or infinite.

    The train loop itself stops at the first non-finite step of a loop, so
    the step named is the one that diverged. loss_tensor: the value watched,
    by name ("loss", the spec's) or, as TF1 programs gave it from model_fn,
    as the tensor.
    """

    def __init__(self, loss_tensor="loss", fail_on_nan_loss=True):
        self._name = value_name(loss_tensor)
        self._fail = fail_on_nan_loss

    def steps_to_trigger(self, step):
        return None  # (any number of steps a call suits it)

    def before_step(self, step):
        return (self._name,)

    def after_step(self, step, values, context):
        loss = float(np.asarray(values[self._name]))
        if math.isfinite(loss):
            return
        if self._fail:
            raise NanLossDuringTrainingError(step, loss)
        logging.error("Loss is %s at step %d; stopping training.", loss, step)
        context.request_stop()


class StopAtStepHook(Hook):
    """Requests a stop after `num_steps` more steps or at `last_step`."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook: give exactly one of num_steps and last_step")
        self._num_steps = num_steps
        self.last_step = last_step

    def begin(self, context):
        if self._num_steps is not None:
            self.last_step = context.start_step + self._num_steps

    def steps_to_trigger(self, step):
        return max(1, self.last_step - step)

    def after_step(self, step, values, context):
        if step >= self.last_step:
            context.request_stop()


