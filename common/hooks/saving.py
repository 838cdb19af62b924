"""Hooks that write the run down: checkpoints, summaries, hyperparameters."""

import math
import time

import numpy as np
from tensorflow.compat.v1 import logging

from common.hooks.protocol import Hook, HookWriter, PeriodicHook, value_name
from common.hooks.signals import STOP_VALUE
from common.hooks.triggers import Trigger
from common.state import summaries


class CheckpointSaverHook(Hook):
    """Saves a checkpoint at the start, every save_steps steps (on their
    multiples) or save_secs seconds, and at the end; given neither, at the
    start and the end only (tf.estimator's required one of them).

    A CheckpointSaverHook among train()'s hooks replaces the estimator's own (RunConfig's
    save_checkpoints_steps / _secs), as in tf.estimator. It never saves a state whose loss is not finite, so
    after a divergence the newest checkpoint is the last good one. The start's checkpoint (the state before the
    run's first step, unless model_dir has it already) is not announced to saving listeners.

    Args:
      checkpoint_dir: None, or the estimator's model_dir (train() raises ValueError for another folder):
        checkpoints go to model_dir/model.ckpt-<step>.
      save_secs: save every this many seconds (at the first loop boundary past them).
      save_steps: save at each multiple of this many global steps (not with save_secs).
      saver: must be None (there is no TF1 Saver).
      checkpoint_basename: must be "model.ckpt".
      scaffold: must be None.
      listeners: saving listeners (after_save(estimator, step), or TF1 CheckpointSaverListeners); the first
        CheckpointSaverHook's join the train() call's saving_listeners.
      save_graph_def: ignored (there is no graph to save).
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      NotImplementedError: saver, scaffold or another checkpoint_basename given.
      ValueError: both save_steps and save_secs, save_steps < 1 or save_secs < 0.
    """

    def __init__(self, checkpoint_dir=None, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True,
                 clock=time.time):
        del save_graph_def  # (there is no graph to save)
        if saver is not None or scaffold is not None or checkpoint_basename != "model.ckpt":
            raise NotImplementedError("CheckpointSaverHook: saver, scaffold and checkpoint_basename are not "
                                      "supported; checkpoints hold the model's variables as model_dir/model.ckpt-N")
        if save_steps is not None and save_secs is not None:
            raise ValueError(f"CheckpointSaverHook: give save_steps or save_secs, not both (got {save_steps} and "
                             f"{save_secs})")
        self.checkpoint_dir = checkpoint_dir
        self.listeners = list(listeners or ())
        periodic = save_steps is not None or save_secs is not None
        self._trigger = Trigger(save_steps, save_secs, clock) if periodic else None
        self._last_saved = None
        self._finite = True

    def begin(self, context):
        """See Hook.begin: saves the starting state, unless the newest checkpoint is at the start step.

        Args:
          context: the run's RunContext.
        """
        if self._trigger is not None:
            self._trigger.update(context.start_step)
        if context.latest_checkpoint_step() != context.start_step:
            context.save_checkpoint(context.start_step, initial=True)
        self._last_saved = context.start_step

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          Steps to the next multiple of save_steps, or None (save_secs, or neither).
        """
        return None if self._trigger is None else self._trigger.steps_to_trigger(step)

    def before_step(self, step):
        """See Hook.before_step.

        Args:
          step: the global step before the call.

        Returns:
          ("loss",): a state is saved only when its loss is finite.
        """
        return ("loss",)

    def after_step(self, step, values, context):
        """See Hook.after_step: saves when due (not where the loss is not finite: an error is logged).

        Args:
          step: the global step after the call.
          values: the values asked for; "loss" among them.
          context: the run's RunContext.
        """
        self._finite = math.isfinite(float(np.asarray(values["loss"])))
        if self._trigger is not None and self._trigger.should_trigger(step):
            self._trigger.update(step)
            self._save(step, context)

    def end(self, step, context):
        """See Hook.end: saves the final state, unless it was just saved (or its loss is not finite).

        Args:
          step: the final global step.
          context: the run's RunContext.
        """
        if self._last_saved != step:
            self._save(step, context)

    def _save(self, step, context):
        if not self._finite:
            logging.error("Not saving a checkpoint at step %d: the loss is not finite.", step)
            return
        context.save_checkpoint(step)
        self._last_saved = step


class SummarySaverHook(PeriodicHook):
    """Writes step values (default: all scalars the step offers) at the first step
    of a run, then every N steps after the last write, as TF1's did (1, 101, 201);
    and the TF1 summary ops model_fn made (images, histograms: tower 0's), as TF1's
    wrote its merged summary. train() adds one (RunConfig.save_summary_steps).

    TF1's arguments, in its order, and `names`. TF1's required summary_op or scaffold; here neither means
    every summary.

    Args:
      save_steps: write every this many global steps; neither this nor save_secs: every 100 steps.
      save_secs: write every this many seconds (at the first loop boundary past them); when given, save_steps
        is ignored.
      output_dir: a folder whose events get the TF1 summary ops' protos (a writer of the hook's own, closed at
        its end); None, or the model dir: the run's events. The step values go to the run's events always.
      summary_writer: a tf.summary writer for those protos instead (the hook does not close it).
      scaffold: accepted, unused.
      summary_op: a TF1 summary tensor of model_fn (merge_all()'s, or one summary's; or its name), or a list
        of them: what it writes, instead of every summary (then no step values unless `names` says).
      names: the step values (value_name()s of scalars the step offers) to write; None: every one it offers.
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: a summary_op value_name() refuses; save_steps < 1 or save_secs < 0.
    """

    first = True
    aligned = False

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None, names=None, clock=time.time):
        super().__init__(save_steps if save_steps is not None or save_secs is not None else 100, save_secs, clock)
        del scaffold
        self._names = tuple(names) if names else None
        ops = summary_op if isinstance(summary_op, (list, tuple)) else [summary_op] if summary_op is not None else []
        self._summary_ops = tuple(value_name(op) for op in ops)
        self._hook_writer = HookWriter(output_dir, summary_writer)

    def begin(self, context):
        """See Hook.begin: settles what it writes and opens the writer the arguments name.

        Args:
          context: the run's RunContext.
        """
        if self._summary_ops:  # TF1's hook of one summary op writes that alone
            self._names = self._names or ()
            self._summary_tensors = self._summary_ops
        else:
            offered = [n for n in context.available_values if n not in ("global_step", STOP_VALUE)]
            self._names = self._names or tuple(offered)
            self._summary_tensors = context.summary_tensors
        self._context = context
        self._writer = self._hook_writer.open(context)

    def before_step(self, step):
        """See Hook.before_step.

        Args:
          step: the global step before the call.

        Returns:
          The names of the step values it writes, and of the summary protos where the call may end on a write.
        """
        if not self._summary_tensors:
            return self._names
        # The protos are fetched (a step outside the compiled loop) only for a call that ends where the hook
        # fires; a seconds trigger cannot be told in advance.
        firing = self._trigger.every_secs is not None or \
            self._trigger.should_trigger(step + self._context.steps_coming)
        return self._names + (self._summary_tensors if firing else ())

    def end(self, step, context):
        """See Hook.end: closes the hook's own writer, if it made one.

        Args:
          step: the final global step.
          context: the run's RunContext.
        """
        super().end(step, context)
        self._hook_writer.close(context)

    def _fire(self, step, values, context, elapsed):
        if self._names:
            context.write_scalars(step, {name: values[name] for name in self._names})
        if self._writer is not None:
            for name in (n for n in self._summary_tensors if n in values):  # (the input may end a call early)
                summaries.write_serialized(self._writer, step, values[name], context.summary_scope)


class HParamsHook(Hook):
    """Records the run's hyperparameters once, when it starts, in the run's event
    file, so TensorBoard's HParams view lists the run with them (the mains give
    their flags). Nothing is written where the run has no event file (evaluate, predict).

    Args:
      hparams: name -> value (a mapping, or (name, value) pairs): a bool, a number, or anything else, written
        as its str.
    """

    def __init__(self, hparams):
        self._hparams = dict(hparams)

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          None: any number of steps a call suits it.
        """
        return None  # (any number of steps a call suits it)

    def begin(self, context):
        """See Hook.begin: writes the hyperparameters to the run's event file.

        Args:
          context: the run's RunContext.
        """
        if context.summary_writer is not None:
            summaries.write_hparams(context.summary_writer, self._hparams)


