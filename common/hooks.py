"""A small hook protocol in place of SessionRunHook, and the standard hooks.

The train loop runs `steps_per_loop` compiled steps per call, so hooks fire
at loop boundaries:

  begin(context)              once, before the first step
  steps_to_trigger(step)      how many steps until the hook wants a boundary
                              (the loop is cut short to honour it), or None
  before_step(step) -> names  the values wanted at the end of the coming loop
  after_step(step, values, context)
                              `step` is the global step after the loop;
                              `values` maps each asked-for name to numpy
  end(step, context)          once, after a run that ended normally

Values a train step offers: "loss" and "learning_rate" (means over towers),
"global_step", every name in the model_fn's EstimatorSpec.scalars, and any
tensor model_fn named in its graph (`tf.identity(t, name="probabilities")`,
asked for as "probabilities" or "probabilities:0", or as the tensor itself):
over towers a floating scalar is the towers' mean, any other tensor the
towers' values concatenated along the first (batch) axis, tower 0's for a
scalar that is not floating.
"""

import datetime
import math
import time

import numpy as np
import tensorflow as tf
from absl import logging

from common import checkpoints, summaries
from common.triggers import Trigger


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


def value_name(fetch):
    """The name a hook asks for a value by: a string (a trailing ":0" dropped),
    a tensor of model_fn's graph (its name), or the global-step variable."""
    if isinstance(fetch, str):
        return fetch[:-2] if fetch.endswith(":0") else fetch
    if isinstance(fetch, tf.Variable) and fetch.name.split(":")[0] == "global_step":
        return "global_step"
    if isinstance(fetch, tf.Tensor) and hasattr(fetch, "graph"):  # a symbolic tensor (eager ones have no graph)
        return value_name(fetch.name)
    raise ValueError(
        f"{fetch!r}: a hook asks for a value by name (\"loss\", \"learning_rate\", \"global_step\", a spec "
        "scalar, a summary written in model_fn, or a tensor model_fn named with tf.identity(t, name=...)), "
        "or as that tensor, or as the global-step variable")


class RunContext:
    """What a hook may see and do during a run.

    available_values: the names every step offers; graph_tensors: the names of
    tensors in model_fn's graph, which a step offers when a hook asks.
    """

    def __init__(self, model_dir, available_values, start_step=0, summary_writer=None,
                 save_checkpoint=None, latest_checkpoint=None, graph_tensors=()):
        self.model_dir = model_dir
        self.start_step = start_step
        self.available_values = tuple(available_values)
        self.graph_tensors = frozenset(graph_tensors)
        self.steps_coming = 1  # how many steps the coming call runs (set by the train loop)
        self.summary_writer = summary_writer
        self._save_checkpoint = save_checkpoint
        self._latest_checkpoint = latest_checkpoint
        self.stop_requested = False

    def request_stop(self):
        self.stop_requested = True

    def check_offered(self, names, asker):
        """ValueError naming each of `names` that no step offers."""
        missing = sorted(n for n in set(names) - set(self.available_values)
                         if n.split(":")[0] not in self.graph_tensors)
        if missing:
            named = "; or a tensor model_fn names with tf.identity(t, name=...)" if self.graph_tensors else ""
            raise ValueError(f"{asker} asks for {', '.join(missing)}, which the step does not offer; it offers "
                             f"{', '.join(self.available_values)}{named}")

    def save_checkpoint(self, step, initial=False):
        """Saves a checkpoint; `initial` (the state before any step of this run)
        is not announced to saving listeners, which evaluate trained states."""
        if self._save_checkpoint is None:
            raise RuntimeError("checkpoints can only be saved during training")
        return self._save_checkpoint(step, initial)

    def latest_checkpoint(self):
        """The newest checkpoint's path, or None."""
        return self._latest_checkpoint() if self._latest_checkpoint else None

    def latest_checkpoint_step(self):
        latest = self.latest_checkpoint()
        return checkpoints.step_of(latest) if latest else None

    def write_scalars(self, step, scalars):
        """Writes scalars to the run's TensorBoard event file, if it has one."""
        if self.summary_writer is not None:
            summaries.write_scalars(self.summary_writer, step, scalars)


class Hook:
    """Base class: every method is optional."""

    def begin(self, context):
        pass

    def steps_to_trigger(self, step):
        return None

    def before_step(self, step):
        return ()

    def after_step(self, step, values, context):
        pass

    def end(self, step, context):
        pass


class PeriodicHook(Hook):
    """Does `_fire` every N steps, or every N seconds when that is given:
    the trigger says when, the subclass says what."""

    first = False  # trigger at the first loop boundary of a run too
    aligned = True  # step triggers on multiples of N (else N steps after the last firing)

    def __init__(self, every_n_steps=None, every_n_secs=None, clock=time.time):
        if every_n_secs is not None:
            every_n_steps = None
        self._trigger = Trigger(every_n_steps, every_n_secs, clock, first=self.first, aligned=self.aligned)

    def steps_to_trigger(self, step):
        return self._trigger.steps_to_trigger(step)

    def after_step(self, step, values, context):
        if self._trigger.should_trigger(step):
            self._fire(step, values, context, self._trigger.update(step))

    def _fire(self, step, values, context, elapsed):
        """elapsed: (seconds, steps) since the last firing, None the first time."""
        raise NotImplementedError


class _RateHook(PeriodicHook):
    """Measures the time between its triggers; subclasses report the rate."""

    first = True  # the first boundary only starts the clock: tracing is not timed

    def _fire(self, step, values, context, elapsed):
        if elapsed is not None and elapsed[0] > 0:
            self._report(step, *elapsed, context)

    def _report(self, step, seconds, steps, context):
        raise NotImplementedError


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


class ExamplesPerSecondHook(_RateHook):
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


class StepCounterHook(_RateHook):
    """Logs and records `global_step/sec` (as TF1's: from the first step of a run,
    every N steps after the last report)."""

    aligned = False

    def __init__(self, every_n_steps=100, every_n_secs=None, clock=time.time):
        super().__init__(every_n_steps, every_n_secs, clock)

    def _report(self, step, seconds, steps, context):
        logging.info("global_step/sec: %g", steps / seconds)
        context.write_scalars(step, {"global_step/sec": steps / seconds})


class ProgressHook(_RateHook):
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


class NanTensorHook(Hook):
    """Stops training when the loss is NaN or infinite.

    The train loop itself stops at the first non-finite step of a loop, so
    the step named is the one that diverged.
    """

    def __init__(self, loss_name="loss", fail_on_nan_loss=True):
        self._name = loss_name
        self._fail = fail_on_nan_loss

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


class CheckpointSaverHook(Hook):
    """Saves a checkpoint at the start, every save_steps steps (on their
    multiples) or save_secs seconds, and at the end; given neither, at the
    start and the end only.

    tf.estimator's arguments: checkpoint_dir, if given, must be the
    estimator's model_dir; listeners join the train() call's saving
    listeners. A CheckpointSaverHook among train()'s hooks replaces the
    estimator's own, as in tf.estimator. It never saves a state whose loss
    is not finite, so after a divergence the newest checkpoint is the last
    good one.
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
        if self._trigger is not None:
            self._trigger.update(context.start_step)
        if context.latest_checkpoint_step() != context.start_step:
            context.save_checkpoint(context.start_step, initial=True)
        self._last_saved = context.start_step

    def steps_to_trigger(self, step):
        return None if self._trigger is None else self._trigger.steps_to_trigger(step)

    def before_step(self, step):
        return ("loss",)

    def after_step(self, step, values, context):
        self._finite = math.isfinite(float(np.asarray(values["loss"])))
        if self._trigger is not None and self._trigger.should_trigger(step):
            self._trigger.update(step)
            self._save(step, context)

    def end(self, step, context):
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
    of a run, then every N steps after the last write, as TF1's did (1, 101, 201)."""

    first = True
    aligned = False

    def __init__(self, save_steps=100, save_secs=None, names=None, clock=time.time):
        super().__init__(save_steps, save_secs, clock)
        self._names = tuple(names) if names else None

    def begin(self, context):
        offered = [n for n in context.available_values if n != "global_step"]
        self._names = self._names or tuple(offered)

    def before_step(self, step):
        return self._names

    def _fire(self, step, values, context, elapsed):
        context.write_scalars(step, {name: values[name] for name in self._names})


class HParamsHook(Hook):
    """Records the run's hyperparameters once, when it starts, in the run's event
    file, so TensorBoard's HParams view lists the run with them (the mains give
    their flags)."""

    def __init__(self, hparams):
        self._hparams = dict(hparams)

    def begin(self, context):
        if context.summary_writer is not None:
            summaries.write_hparams(context.summary_writer, self._hparams)


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
