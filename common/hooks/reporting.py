"""Hooks that say how training goes: logged values, examples/sec, steps/sec, progress."""

import datetime
import time

import numpy as np
from absl import logging

from common.hooks.protocol import Hook, HookWriter, RateHook, value_name
from common.hooks.triggers import Trigger
from common.state import summaries


class LoggingTensorHook(Hook):
    """Logs named step values: "loss = 0.31, learning_rate = 0.1, step = 100 (4.2 sec)".

    tf.estimator's arguments. tensors: a list of values, or a dict label ->
    value, each value as value_name() reads it. As TF1's: it logs the first
    step of a run, then every N steps after it (steps 1, 4, 7 for N = 3),
    and "global_step" is the step the logged step started from (0 for the
    first); formatter(dict label -> value) makes the line instead; at_end
    logs the last step's values when training ends. It asks for values only
    for a call that ends on a step it logs (with at_end or every_n_secs, for
    every call: tensors model_fn named then cost each step its own call).
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
        context.check_offered(self._tensors.values(), "LoggingTensorHook")
        self._context = context
        if self._trigger is not None:  # each train() call logs its first step, as TF1's hook reset its timer
            self._trigger.reset()

    def steps_to_trigger(self, step):
        return None if self._trigger is None else self._trigger.steps_to_trigger(step)

    def before_step(self, step):
        coming = step + self._context.steps_coming
        if self._at_end or (self._trigger is not None and (self._trigger.every_secs is not None
                                                           or self._trigger.should_trigger(coming))):
            return tuple(self._tensors.values())
        return ()

    def after_step(self, step, values, context):
        if not all(name in values for name in self._tensors.values()):
            return  # (a call cut short by the input's end, before the step it was to log)
        self._last = step, dict(values)
        if self._trigger is not None and self._trigger.should_trigger(step):
            self._log(step, values, self._trigger.update(step))

    def end(self, step, context):
        if self._at_end and self._last is not None:
            self._log(*self._last, None)

    def _log(self, step, values, elapsed):
        shown = {**values, "global_step": step - 1}
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

    A is the mean over all triggered intervals so far, C over the last one;
    C is also written as the `examples/sec` summary.
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
    """Logs and records `global_step/sec` (as TF1's: from the first step of a run,
    every N steps after the last report), in the model dir's events or, as TF1's
    arguments say, output_dir's or summary_writer's."""

    aligned = False

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None, clock=time.time):
        super().__init__(every_n_steps, every_n_secs, clock)
        self._hook_writer = HookWriter(output_dir, summary_writer)

    def begin(self, context):
        super().begin(context)
        self._hook_writer.open(context)

    def end(self, step, context):
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
    whole run so far; examples/sec needs the global batch size.
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
        if self._num_steps is not None:
            self.last_step = context.start_step + self._num_steps
        self._first_step = context.start_step

    def after_step(self, step, values, context):
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


