"""TPUEstimator's own step-rate hook: `global_step/sec` and `examples/sec`, as tf.estimator's TPU path wrote them.

TPUEstimator took RunConfig's log_step_count_steps for itself (the Estimator
it built got None, so no `loss = ..., step = ...` lines off a TPU) and ran
an ExamplesPerSecondHook every ceil(log_step_count_steps / iterations_per_loop)
global steps, which logged and wrote both rates, the second the first times
the global batch size; TensorBoard dashboards read `examples/sec` from it.
"""

import time

from tensorflow.compat.v1 import logging

from common.hooks.reporting import StepCounterHook
from common.state import summaries


class ExamplesPerSecondHook(StepCounterHook):
    """Logs "global_step/sec: %g" and "examples/sec: %g", and writes both to the run's events (unless
    write_summaries is False), every N global steps.

    Args:
      batch_size: examples per global step (the global train batch).
      every_n_steps: report every this many global steps.
      write_summaries: write the two summaries (tf.estimator's TPU path did when save_summary_steps was set).
      clock: the time source, in seconds (tests give a fake one).
    Raises:
      ValueError: every_n_steps < 1.
    """

    def __init__(self, batch_size, every_n_steps, write_summaries=True, clock=time.time):
        super().__init__(every_n_steps=every_n_steps, clock=clock)
        self._batch_size = batch_size
        self._write_summaries = write_summaries

    def _report(self, step, seconds, steps, context):
        rates = {"global_step/sec": steps / seconds, "examples/sec": self._batch_size * steps / seconds}
        for tag, rate in rates.items():
            logging.info("%s: %g", tag, rate)
        if self._write_summaries and self._hook_writer.writer is not None:
            summaries.write_scalars(self._hook_writer.writer, step, rates)
