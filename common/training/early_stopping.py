"""Early stopping: training hooks that stop when the evaluations say so.

tf.estimator.experimental's family, with its names and arguments: each
hook reads the eval results written to the eval dir (model_dir/eval, or
eval_<name>), every `run_every_secs` or `run_every_steps`, and requests a
stop when its rule holds, logging which evaluation made it hold. With
train_and_evaluate, which evaluates after each checkpoint, a check every
step (run_every_steps=1) stops training at the step after the evaluation
that triggers the rule, as tf.estimator's did (each step is then a call of
the compiled loop of its own); run_every_secs=0 checks at every loop
boundary instead, the steps between them at full speed.
"""

import collections
import operator
import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.hooks.protocol import PeriodicHook
from common.state import summaries


def read_eval_metrics(eval_dir):
    """The evaluations written to an eval dir, by step: tf.estimator.experimental.read_eval_metrics.

    Args:
      eval_dir: the folder of the event files (events.out.tfevents.*), as Estimator.eval_dir() names it.

    Returns:
      An OrderedDict global step -> {metric: value}, in increasing step order, of the numbers in the event
      files (strings such as checkpoint_path left out); empty where there are none.
    """
    paths = tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))
    return collections.OrderedDict(summaries.metrics_by_step(paths))


class _StopOnPredicateHook(PeriodicHook):
    """Requests a stop when should_stop_fn() says so; checks at the first loop
    boundary of a run, then N steps after the last check (the loop is cut
    there, as tf.estimator's hook checked after its step), or at the first
    boundary N seconds after it."""

    first = True
    aligned = False

    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None):
        if run_every_secs is None and run_every_steps is None:
            raise ValueError("early stopping: give run_every_secs or run_every_steps")
        super().__init__(run_every_steps, None if run_every_steps is not None else run_every_secs)
        self._should_stop_fn = should_stop_fn

    def _fire(self, step, values, context, elapsed):
        if self._should_stop_fn():
            logging.info("Requesting early stopping at global step %d", step)
            context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """A hook that stops training when should_stop_fn() returns True: tf.estimator.experimental's.

    It checks at the first loop boundary of a run, then run_every_steps steps after the last check (the loop is
    cut there), or at the first boundary run_every_secs seconds after it.

    Args:
      estimator: the Estimator being trained (unused: tf.estimator needed it for the chief's stop flag; one
        process decides here).
      should_stop_fn: a function of no arguments -> bool (True: stop).
      run_every_secs: check every this many seconds (>= 0; 0: at every loop boundary); ignored where
        run_every_steps is given (tf.estimator's refused both).
      run_every_steps: check every this many global steps (>= 1).

    Returns:
      The hook (a common.hooks.Hook), for train()'s hooks or TrainSpec(hooks=...).

    Raises:
      TypeError: should_stop_fn not callable.
      ValueError: neither run_every_secs nor run_every_steps, run_every_steps < 1 or run_every_secs < 0.
    """
    if not callable(should_stop_fn):
        raise TypeError(f"should_stop_fn must be callable, got {should_stop_fn!r}")
    del estimator  # (tf.estimator needed it for the chief's stop flag; one process decides here)
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _eval_dir(estimator, eval_dir):
    return eval_dir or estimator.eval_dir()


def _metric_of(metrics, metric_name, step, eval_dir):
    if metric_name not in metrics:
        raise ValueError(f"early stopping: the evaluation at global step {step} in {eval_dir} has no metric "
                         f"{metric_name!r} (it has {', '.join(sorted(metrics))})")
    return metrics[metric_name]


def _stop_if_threshold_crossed(estimator, metric_name, threshold, eval_dir, min_steps, run_every_secs,
                               run_every_steps, higher):
    eval_dir = _eval_dir(estimator, eval_dir)
    crossed = operator.gt if higher else operator.lt

    def should_stop():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric_of(metrics, metric_name, step, eval_dir)
            if crossed(value, threshold):
                logging.info('At step %s, metric "%s" has value %s which is %s the configured threshold (%s) for '
                             "early stopping.", step, metric_name, value, "higher than" if higher else "lower than",
                             threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _stop_if_no_improvement(estimator, metric_name, max_steps_without_improvement, eval_dir, min_steps,
                            run_every_secs, run_every_steps, higher):
    if max_steps_without_improvement is None or max_steps_without_improvement < 0:
        raise ValueError(f"early stopping: max steps without {'increase' if higher else 'decrease'} must be >= 0, "
                         f"got {max_steps_without_improvement}")
    eval_dir = _eval_dir(estimator, eval_dir)
    better = operator.gt if higher else operator.lt

    def should_stop():
        best, best_step = None, None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric_of(metrics, metric_name, step, eval_dir)
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps_without_improvement:
                logging.info('No %s in metric "%s" for %s steps (best %s at step %s), which is greater than or equal '
                             "to max steps (%s) configured for early stopping.", "increase" if higher else "decrease",
                             metric_name, step - best_step, best, best_step, max_steps_without_improvement)
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60,
                        run_every_steps=None):
    """Stops once an evaluation's `metric_name` is above `threshold`: tf.estimator.experimental's hook.

    Args:
      estimator: the Estimator being trained; its eval_dir() is the default eval_dir.
      metric_name: the metric (a key of evaluate()'s results: "loss", "accuracy", ...).
      threshold: stop once an evaluation's metric (any in eval_dir, an earlier run's too) is greater than this.
      eval_dir: the folder of the evaluations' event files; None: estimator.eval_dir() (model_dir/eval; an
        EvalSpec with a name writes to eval_<name>).
      min_steps: evaluations before this global step are not considered.
      run_every_secs: check every this many seconds (see make_early_stopping_hook).
      run_every_steps: check every this many global steps (given, it replaces run_every_secs).

    Returns:
      The hook, for train()'s hooks or TrainSpec(hooks=...).

    Raises:
      ValueError: as make_early_stopping_hook's; at a check, an evaluation without metric_name.
    """
    return _stop_if_threshold_crossed(estimator, metric_name, threshold, eval_dir, min_steps, run_every_secs,
                                      run_every_steps, higher=True)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60,
                       run_every_steps=None):
    """Stops once an evaluation's `metric_name` is below `threshold`: tf.estimator.experimental's hook.

    Args:
      estimator: the Estimator being trained; its eval_dir() is the default eval_dir.
      metric_name: the metric (a key of evaluate()'s results: "loss", "accuracy", ...).
      threshold: stop once an evaluation's metric (any in eval_dir, an earlier run's too) is less than this.
      eval_dir: the folder of the evaluations' event files; None: estimator.eval_dir() (model_dir/eval; an
        EvalSpec with a name writes to eval_<name>).
      min_steps: evaluations before this global step are not considered.
      run_every_secs: check every this many seconds (see make_early_stopping_hook).
      run_every_steps: check every this many global steps (given, it replaces run_every_secs).

    Returns:
      The hook, for train()'s hooks or TrainSpec(hooks=...).

    Raises:
      ValueError: as make_early_stopping_hook's; at a check, an evaluation without metric_name.
    """
    return _stop_if_threshold_crossed(estimator, metric_name, threshold, eval_dir, min_steps, run_every_secs,
                                      run_every_steps, higher=False)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, eval_dir=None, min_steps=0,
                             run_every_secs=60, run_every_steps=None):
    """Stops when `metric_name` has not risen above its best for max_steps_without_increase steps:
    tf.estimator.experimental's hook.

    Args:
      estimator: the Estimator being trained; its eval_dir() is the default eval_dir.
      metric_name: the metric (a key of evaluate()'s results: "loss", "accuracy", ...).
      max_steps_without_increase: stop at an evaluation this many global steps or more past the best one so
        far (the highest; >= 0: 0 stops at the first evaluation considered).
      eval_dir: the folder of the evaluations' event files; None: estimator.eval_dir() (model_dir/eval; an
        EvalSpec with a name writes to eval_<name>).
      min_steps: evaluations before this global step are not considered.
      run_every_secs: check every this many seconds (see make_early_stopping_hook).
      run_every_steps: check every this many global steps (given, it replaces run_every_secs).

    Returns:
      The hook, for train()'s hooks or TrainSpec(hooks=...).

    Raises:
      ValueError: as make_early_stopping_hook's, or max_steps_without_increase None or < 0; at a check, an
        evaluation without metric_name.
    """
    return _stop_if_no_improvement(estimator, metric_name, max_steps_without_increase, eval_dir, min_steps,
                                   run_every_secs, run_every_steps, higher=True)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, eval_dir=None, min_steps=0,
                             run_every_secs=60, run_every_steps=None):
    """Stops when `metric_name` has not fallen below its best for max_steps_without_decrease steps:
    tf.estimator.experimental's hook.

    Args:
      estimator: the Estimator being trained; its eval_dir() is the default eval_dir.
      metric_name: the metric (a key of evaluate()'s results: "loss", "accuracy", ...).
      max_steps_without_decrease: stop at an evaluation this many global steps or more past the best one so
        far (the lowest; >= 0: 0 stops at the first evaluation considered).
      eval_dir: the folder of the evaluations' event files; None: estimator.eval_dir() (model_dir/eval; an
        EvalSpec with a name writes to eval_<name>).
      min_steps: evaluations before this global step are not considered.
      run_every_secs: check every this many seconds (see make_early_stopping_hook).
      run_every_steps: check every this many global steps (given, it replaces run_every_secs).

    Returns:
      The hook, for train()'s hooks or TrainSpec(hooks=...).

    Raises:
      ValueError: as make_early_stopping_hook's, or max_steps_without_decrease None or < 0; at a check, an
        evaluation without metric_name.
    """
    return _stop_if_no_improvement(estimator, metric_name, max_steps_without_decrease, eval_dir, min_steps,
                                   run_every_secs, run_every_steps, higher=False)
