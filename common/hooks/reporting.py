"""Hooks that say how training goes: logged values, examples/sec, steps/sec, progress."""

import datetime
import time

import numpy as np
from tensorflow.compat.v1 import logging

from common.hooks.protocol import Hook, HookWriter, RateHook, value_name
from common.hooks.triggers import Trigger
from common.state import summaries


class LoggingTensorHook(Hook):
    """Logs named step values: "loss = 0.31, learning_rate = 0.1, step = 100 (4.2 sec)".

    tf.estimator's hook, with its arguments. As TF1's: it logs the first step of each run, then every N steps
    after the last line (steps 1, 4, 7 for N = 3), and "global_step" is the step the logged step started from
    (0 for the first), or, where model_fn's train_op writes the step itself (BERT's), the step it ended on, as
    TF1's fetch read the written value. It asks for values only for a call that ends on a step it logs (with at_end or
    every_n_secs, for every call: tensors model_fn named then cost each step its own call).

    Args:
      tensors: a list of values, or a dict label -> value (logged in the dict's order; TF1's sorted the
        labels), each value as value_name() reads it: a name, a tensor model_fn named, the global step.
      every_n_iter: log every this many global steps (>= 1).
      every_n_secs: log every this many seconds, at the first loop boundary past them (not with every_n_iter).
      at_end: also log the last step's values when the run ends.
      formatter: formatter(dict label -> numpy value) -> the str to log instead of the default line; None:
        the default.
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: neither every_n_iter, every_n_secs nor at_end given, both every_n_iter and every_n_secs,
        every_n_iter < 1, every_n_secs < 0, or a value value_name() refuses; begin() raises it for a value no
        step offers.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None,
                 clock=time.time):
        if every_n_iter is None and every_n_secs is None and not at_end:
            raise ValueError("LoggingTensorHook: give at_end=True and/or one of every_n_iter and every_n_secs")
        if every_n_iter is not None and every_n_secs is not None:
            raise ValueError("LoggingTensorHook: give every_n_iter or every_n_secs, not both")
        if not isinstance(tensors, dict):
            tensors = {value_name(t): t for t in tensors}
        self._tensors = {label: value_name(t) for label, t in tensors.items()}
        periodic = every_n_iter is not None or every_n_secs is not None
        self._trigger = Trigger(every_n_iter, every_n_secs, clock, first=True, aligned=False) if periodic else None
        self._at_end = at_end
        self._formatter = formatter
        self._context = None
        self._last = None

    def begin(self, context):
        """See Hook.begin: checks that the step offers every value, and restarts the count (each run logs its
        first step).

        Args:
          context: the run's RunContext.

        Raises:
          ValueError: a value no step offers (from context.check_offered).
        """
        context.check_offered(self._tensors.values(), "LoggingTensorHook")
        self._context = context
        if self._trigger is not None:  # each train() call logs its first step, as TF1's hook reset its timer
            self._trigger.reset()

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          Steps to the next logged step, or None (every_n_secs, or at_end alone).
        """
        return None if self._trigger is None else self._trigger.steps_to_trigger(step)

    def before_step(self, step):
        """See Hook.before_step.

        Args:
          step: the global step before the call.

        Returns:
          The values' names where the call may end on a logged step (always with at_end or every_n_secs), else ().
        """
        coming = step + self._context.steps_coming
        if self._at_end or (self._trigger is not None and (self._trigger.every_secs is not None
                                                           or self._trigger.should_trigger(coming))):
            return tuple(self._tensors.values())
        return ()

    def after_step(self, step, values, context):
        """See Hook.after_step: logs the values when the step is due, and keeps them for at_end.

        Args:
          step: the global step after the call.
          values: the values asked for (see Hook.after_step).
          context: the run's RunContext.
        """
        if not all(name in values for name in self._tensors.values()):
            return  # (a call cut short by the input's end, before the step it was to log)
        self._last = step, dict(values)
        if self._trigger is not None and self._trigger.should_trigger(step):
            self._log(step, values, self._trigger.update(step))

    def end(self, step, context):
        """See Hook.end: with at_end, logs the last values heard (without the time taken).

        Args:
          step: the final global step.
          context: the run's RunContext.
        """
        if self._at_end and self._last is not None:
            self._log(*self._last, None)

    def _log(self, step, values, elapsed):
        shown = {**values, "global_step": step if self._context.step_read_after_update else step - 1}
        labelled = {label: shown[name] for label, name in self._tensors.items()}
        if self._formatter is not None:
            logging.info("%s", self._formatter(labelled))
            return
        text = ", ".join(f"{label} = {_format(value)}" for label, value in labelled.items())
        if elapsed is not None:
            text += f" ({elapsed[0]:.3f} sec)"
        logging.info("%s", text)


def _format(value):
    """As TF1's LoggingTensorHook printed a value: numpy's str of it."""
    value = np.asarray(value)
    return str(value[()]) if value.ndim == 0 else str(value)


class ExamplesPerSecondHook(RateHook):
    """Logs "Average examples/sec: A (current C), step = S" like the official example.

    A is the rate over all intervals reported so far, C over the last one (also the attributes
    average_examples_per_sec and current_examples_per_sec, None before the first report); C is also written as
    the `examples/sec` summary in the run's events. The first loop boundary of a run starts the clock (tracing
    is not timed); reports fall on multiples of every_n_steps.

    Args:
      batch_size: examples per global step (the global batch: all towers' examples).
      every_n_steps: report every this many global steps.
      every_n_secs: report every this many seconds instead (at the first loop boundary past them); when given,
        every_n_steps is ignored.
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: every_n_steps < 1 or every_n_secs < 0 (or both None).
    """

    def __init__(self, batch_size, every_n_steps=100, every_n_secs=None, clock=time.time):
        super().__init__(every_n_steps, every_n_secs, clock)
        self._batch_size = batch_size
        self._total_secs = 0.0
        self._total_steps = 0
        self.average_examples_per_sec = None
        self.current_examples_per_sec = None

    def _report(self, step, seconds, steps, context):
        self._total_secs += seconds
        self._total_steps += steps
        self.average_examples_per_sec = self._batch_size * self._total_steps / self._total_secs
        self.current_examples_per_sec = self._batch_size * steps / seconds
        logging.info(
            "Average examples/sec: %g (current %g), step = %d",
            self.average_examples_per_sec, self.current_examples_per_sec, step,
        )
        context.write_scalars(step, {"examples/sec": self.current_examples_per_sec})


class StepCounterHook(RateHook):
    """Logs and records `global_step/sec`, as tf.estimator's hook: from the first loop boundary of a run (which
    starts the clock), every N steps after the last report.

    Args:
      every_n_steps: report every this many global steps.
      every_n_secs: report every this many seconds; when given, every_n_steps is ignored (TF1's refused
        both, so it needed every_n_steps=None).
      output_dir: write the summaries to this folder's events (a writer of the hook's own, closed at its end);
        None, or the model dir: the run's events (none in evaluation and prediction).
      summary_writer: a tf.summary writer to write them with instead (the hook does not close it).
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: every_n_steps < 1 or every_n_secs < 0 (or both None).
    """

    aligned = False

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None, clock=time.time):
        super().__init__(every_n_steps, every_n_secs, clock)
        self._hook_writer = HookWriter(output_dir, summary_writer)

    def begin(self, context):
        """See Hook.begin: opens the writer the arguments name.

        Args:
          context: the run's RunContext.
        """
        super().begin(context)
        self._hook_writer.open(context)

    def end(self, step, context):
        """See Hook.end: closes the hook's own writer, if it made one.

        Args:
          step: the final global step.
          context: the run's RunContext.
        """
        super().end(step, context)
        self._hook_writer.close(context)

    def _report(self, step, seconds, steps, context):
        logging.info("global_step/sec: %g", steps / seconds)
        if self._hook_writer.writer is not None:
            summaries.write_scalars(self._hook_writer.writer, step, {"global_step/sec": steps / seconds})


class ProgressHook(RateHook):
    """Logs "Progress: step 500 of 2000 (25.0%), 41.2 steps/sec, 5274 examples/sec,
    about 0:00:36 left" every N steps (after the first boundary, which starts
    the clock: tracing is not timed). The rate and the time left are over the
    whole run so far; examples/sec needs the global batch size. (No tf.estimator counterpart: train() adds
    one when given steps or max_steps.)

    Args:
      num_steps: the run trains this many steps from where it starts (train()'s steps).
      last_step: the run trains up to this global step (train()'s max_steps); give exactly one of the two.
      batch_size: examples per global step (the global batch), for examples/sec; None: not shown.
      every_n_steps: log every this many global steps (after the last line).
      every_n_secs: log every this many seconds; when given, every_n_steps is ignored.
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: not exactly one of num_steps and last_step; every_n_steps < 1 or every_n_secs < 0.
    """

    aligned = False

    def __init__(self, num_steps=None, last_step=None, batch_size=None, every_n_steps=100, every_n_secs=None,
                 clock=time.time):
        if (num_steps is None) == (last_step is None):
            raise ValueError("ProgressHook: give exactly one of num_steps and last_step")
        super().__init__(every_n_steps, every_n_secs, clock)
        self._num_steps, self.last_step = num_steps, last_step
        self._batch_size = batch_size
        self._start = None  # (step, time) of the run's first boundary

    def begin(self, context):
        """See Hook.begin: fixes the last step (the attribute last_step) from num_steps.

        Args:
          context: the run's RunContext.
        """
        if self._num_steps is not None:
            self.last_step = context.start_step + self._num_steps
        self._first_step = context.start_step

    def after_step(self, step, values, context):
        """See Hook.after_step: the first call starts the clock; then it logs when due.

        Args:
          step: the global step after the call.
          values: the values asked for (see Hook.after_step).
          context: the run's RunContext.
        """
        if self._start is None:
            self._start = step, self._trigger.clock()
        super().after_step(step, values, context)

    def _report(self, step, seconds, steps, context):
        run_steps, run_seconds = step - self._start[0], self._trigger.clock() - self._start[1]
        if run_steps <= 0 or run_seconds <= 0:
            return
        rate = run_steps / run_seconds
        total = self.last_step - self._first_step
        done = 100.0 * (step - self._first_step) / total if total > 0 else 100.0
        left = datetime.timedelta(seconds=round(max(self.last_step - step, 0) / rate))
        examples = f", {rate * self._batch_size:.0f} examples/sec" if self._batch_size else ""
        logging.info("Progress: step %d of %d (%.1f%%), %.3g steps/sec%s, about %s left", step, self.last_step,
                     done, rate, examples, left)


