"""ProfilerHook: a range of global steps traced with the TensorFlow profiler."""

import tensorflow as tf
from absl import logging

from common.hooks.protocol import Hook


class ProfilerHook(Hook):
    """Traces global steps first_step..last_step with the TensorFlow profiler.

    The TF2 form of tf.estimator's ProfilerHook, with the step range of
    Keras's TensorBoard(profile_batch=(first, last)): the trace lands in
    output_dir/plugins/profile/<run>/ (default: the model dir), where
    TensorBoard's Profile tab finds it. The loop is cut at both ends, so
    the trace holds exactly those steps.
    """

    def __init__(self, first_step, last_step, output_dir=None):
        if not 1 <= first_step <= last_step:
            raise ValueError(f"ProfilerHook: need 1 <= first_step <= last_step, got {first_step} and {last_step}")
        self._start_after = first_step - 1  # the global step before the first traced one
        self._last_step = last_step
        self._output_dir = output_dir
        self._tracing = False

    def begin(self, context):
        self._output_dir = self._output_dir or context.model_dir
        self._start_if_due(context.start_step)

    def steps_to_trigger(self, step):
        if step < self._start_after:
            return self._start_after - step
        if step < self._last_step:
            return self._last_step - step
        return None

    def after_step(self, step, values, context):
        if self._tracing and step >= self._last_step:
            self._stop()
        self._start_if_due(step)

    def end(self, step, context):
        if self._tracing:
            self._stop()

    def _start_if_due(self, step):
        if not self._tracing and self._start_after <= step < self._last_step:
            tf.profiler.experimental.start(self._output_dir)
            self._tracing = True
            logging.info("Profiling global steps %d to %d into %s.", step + 1, self._last_step, self._output_dir)

    def _stop(self):
        tf.profiler.experimental.stop()
        self._tracing = False
