"""ProfilerHook: a range of global steps traced with the TensorFlow profiler."""

import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.hooks.protocol import Hook


class ProfilerHook(Hook):
    """Traces global steps first_step..last_step with the TensorFlow profiler.

    The TF2 form of tf.estimator's ProfilerHook, with the step range of
    Keras's TensorBoard(profile_batch=(first, last)): the trace lands in
    output_dir/plugins/profile/<run>/ (default: the model dir), where
    TensorBoard's Profile tab finds it. The loop is cut at both ends, so
    the trace holds exactly those steps. TF1's form, save_steps=N, traces
    one step in every N (global steps N, 2N, ...: the steps TF1's traced),
    each into output_dir/profile_step_<N>/ (TF1 wrote timeline-<N>.json
    there), which TensorBoard lists as a run; TF2's profiler always records
    what show_dataflow and show_memory asked for.

    Args:
      first_step: the first global step traced (>= 1).
      last_step: the last global step traced (>= first_step).
      output_dir: the folder the traces go under; None: the model dir.
      save_steps: TF1's form, instead of first_step and last_step: trace the global steps that are multiples
        of it (>= 1). Positionally TF1's first argument was save_steps: give it by keyword.
      save_secs: refused (the TF2 profiler traces whole steps).
      show_dataflow: ignored (TF1's timeline option).
      show_memory: ignored (TF1's timeline option).

    Raises:
      ValueError: save_secs given; save_steps < 1 or given with first_step / last_step; without save_steps,
        not 1 <= first_step <= last_step.
    """

    def __init__(self, first_step=None, last_step=None, output_dir=None, save_steps=None, save_secs=None,
                 show_dataflow=True, show_memory=False):
        del show_dataflow, show_memory  # (TF1's timeline options)
        if save_secs is not None:
            raise ValueError("ProfilerHook(save_secs=...): the TF2 profiler traces steps; give save_steps=N, or "
                             "first_step and last_step")
        if save_steps is not None:
            if first_step is not None or last_step is not None or save_steps < 1:
                raise ValueError(f"ProfilerHook: give save_steps >= 1 (TF1's form) or first_step and last_step, "
                                 f"got save_steps={save_steps}, first_step={first_step}, last_step={last_step}")
            first_step = last_step = save_steps
        elif first_step is None or last_step is None or not 1 <= first_step <= last_step:
            raise ValueError(f"ProfilerHook: need 1 <= first_step <= last_step, got {first_step} and {last_step}")
        self._start_after = first_step - 1  # the global step before the first traced one
        self._last_step = last_step
        self._every = save_steps
        self._output_dir = output_dir
        self._tracing = False

    def begin(self, context):
        """See Hook.begin: with save_steps, the range is the next multiple after the start step; tracing
        starts at once where the run starts just before the range or inside it.

        Args:
          context: the run's RunContext.
        """
        self._output_dir = self._output_dir or context.model_dir
        if self._every is not None:  # the next multiple of save_steps after where the run starts
            self._last_step = (context.start_step // self._every + 1) * self._every
            self._start_after = self._last_step - 1
        self._start_if_due(context.start_step)

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger: a boundary just before the range and one at its end.

        Args:
          step: the global step the coming call starts from.

        Returns:
          Steps to the range's start or end, or None past it.
        """
        if step < self._start_after:
            return self._start_after - step
        if step < self._last_step:
            return self._last_step - step
        return None

    def after_step(self, step, values, context):
        """See Hook.after_step: stops the trace at the range's end, starts it just before the range.

        Args:
          step: the global step after the call.
          values: the values asked for (none by this hook).
          context: the run's RunContext.
        """
        if self._tracing and step >= self._last_step:
            self._stop()
        self._start_if_due(step)

    def end(self, step, context):
        """See Hook.end: stops a trace still running (the run ended inside the range).

        Args:
          step: the final global step.
          context: the run's RunContext.
        """
        if self._tracing:
            self._stop()

    def _start_if_due(self, step):
        if not self._tracing and self._start_after <= step < self._last_step:
            into = self._output_dir if self._every is None else \
                os.path.join(self._output_dir, f"profile_step_{self._last_step}")  # (a trace each, as TF1's files)
            tf.profiler.experimental.start(into)
            self._tracing = True
            logging.info("Profiling global steps %d to %d into %s.", step + 1, self._last_step, into)

    def _stop(self):
        tf.profiler.experimental.stop()
        self._tracing = False
        if self._every is not None:
            self._start_after += self._every
            self._last_step += self._every
