"""Hooks that stop training: at a step, or when the loss is not finite."""

import math

import numpy as np
import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.hooks.protocol import Hook, value_name


class NanLossDuringTrainingError(tf.compat.v1.train.NanLossDuringTrainingError):
    """The loss became NaN or infinite; the step is in the message. A
    tf.compat.v1.train.NanLossDuringTrainingError (and a RuntimeError), so
    estimator code's `except` clauses catch it.

    Args:
      step: the global step whose loss was not finite (also the attribute `step`).
      loss: that loss, for the message.
    """

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
    """Stops training when the loss is NaN or infinite (TF1's watched for NaN only).

    The train loop itself stops at the first non-finite step of a loop, so
    the step named is the one that diverged. train() adds one (fail_on_nan_loss=True).

    Args:
      loss_tensor: the value watched, by name ("loss", the spec's: the default, where TF1's had to be given)
        or, as TF1 programs gave it from model_fn, as the tensor (value_name()).
      fail_on_nan_loss: raise NanLossDuringTrainingError; False: log an error and request a stop instead.

    Raises:
      ValueError: a loss_tensor value_name() refuses.
    """

    def __init__(self, loss_tensor="loss", fail_on_nan_loss=True):
        self._name = value_name(loss_tensor)
        self._fail = fail_on_nan_loss

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          None: any number of steps a call suits it.
        """
        return None  # (any number of steps a call suits it)

    def before_step(self, step):
        """See Hook.before_step.

        Args:
          step: the global step before the call.

        Returns:
          The watched value's name, alone in a tuple.
        """
        return (self._name,)

    def after_step(self, step, values, context):
        """See Hook.after_step: checks the watched value of the call's last step.

        Args:
          step: the global step after the call.
          values: the values asked for; the watched one among them.
          context: the run's RunContext (a stop is requested there with fail_on_nan_loss=False).

        Raises:
          NanLossDuringTrainingError: the value is NaN or infinite, with fail_on_nan_loss.
        """
        loss = float(np.asarray(values[self._name]))
        if math.isfinite(loss):
            return
        if self._fail:
            raise NanLossDuringTrainingError(step, loss)
        logging.error("Loss is %s at step %d; stopping training.", loss, step)
        context.request_stop()


class StopAtStepHook(Hook):
    """Requests a stop after `num_steps` more steps or at `last_step`, as tf.estimator's; the loop is cut
    there, so training ends exactly at that global step. train() adds one for its steps / max_steps.

    Args:
      num_steps: stop after this many steps from where each run starts (train()'s steps).
      last_step: stop at this global step (train()'s max_steps; the attribute last_step).

    Raises:
      ValueError: not exactly one of num_steps and last_step given.
    """

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook: give exactly one of num_steps and last_step")
        self._num_steps = num_steps
        self.last_step = last_step

    def begin(self, context):
        """See Hook.begin: with num_steps, fixes last_step from the run's start step.

        Args:
          context: the run's RunContext.
        """
        if self._num_steps is not None:
            self.last_step = context.start_step + self._num_steps

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          The steps left to last_step (at least 1).
        """
        return max(1, self.last_step - step)

    def after_step(self, step, values, context):
        """See Hook.after_step: requests a stop once the global step reaches last_step.

        Args:
          step: the global step after the call.
          values: the values asked for (none by this hook).
          context: the run's RunContext.
        """
        if step >= self.last_step:
            context.request_stop()


