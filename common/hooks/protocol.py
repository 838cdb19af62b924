"""The hook protocol, in place of SessionRunHook: what a hook may do, and when.

The train loop runs several compiled steps per call (as many as the hooks
allow: common.engine.train_loop), so hooks fire at loop boundaries:

  begin(context)              once, before the first step
  steps_to_trigger(step)      how many steps until the hook wants a boundary
                              (the loop is cut short to honour it), or None
                              (any number suits it); by default 1
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

import os
import time

import tensorflow as tf

from common.hooks.triggers import Trigger
from common.state import checkpoints, summaries

# The name scope of the first tower's ops in a step's graph (common.engine.step.tower_scope(0)), where a mode's
# probe of model_fn may be traced: a tensor of it is asked for by the name model_fn gave it, without the scope.
FIRST_TOWER_SCOPE = "tower_0"


def unscoped(name):
    """A name of model_fn's graph as model_fn gave it: without FIRST_TOWER_SCOPE."""
    return name[len(FIRST_TOWER_SCOPE) + 1:] if name.startswith(FIRST_TOWER_SCOPE + "/") else name


def value_name(fetch):
    """The name a hook asks for a step value by, from any form a hook is given (TF1 hooks gave tensors).

    Args:
      fetch: a name (a trailing ":0" dropped: "probabilities:0" is "probabilities"), a symbolic tensor of
        model_fn's graph (its name, without FIRST_TOWER_SCOPE), or the global-step variable (any tf.Variable
        named "global_step", as tf.compat.v1.train.get_global_step() gives it).

    Returns:
      The name, a str: "global_step" for the variable.

    Raises:
      ValueError: for anything else (a number, an eager tensor, another variable).
    """
    if isinstance(fetch, str):
        return fetch[:-2] if fetch.endswith(":0") else fetch
    if isinstance(fetch, tf.Variable) and fetch.name.split(":")[0] == "global_step":
        return "global_step"
    if isinstance(fetch, tf.Tensor) and hasattr(fetch, "graph"):  # a symbolic tensor (eager ones have no graph)
        return value_name(unscoped(fetch.name))
    raise ValueError(
        f"{fetch!r}: a hook asks for a value by name (\"loss\", \"learning_rate\", \"global_step\", a spec "
        "scalar, a summary written in model_fn, or a tensor model_fn named with tf.identity(t, name=...)), "
        "or as that tensor, or as the global-step variable")


class RunContext:
    """What a hook may see and do during a run: tf.estimator's SessionRunContext, and more.

    The Estimator makes one for each train(), evaluate() or predict() call and hands it to every hook's begin(),
    after_step() and end(); a hook stops the run with request_stop(), as with SessionRunContext. Each argument
    is kept as the attribute of its name (save_checkpoint and latest_checkpoint are reached through the methods
    of those names); steps_coming is how many steps the coming call runs (set by the train loop before the hooks'
    before_step; 1 otherwise), stop_requested whether a hook asked to stop.

    Args:
      model_dir: where the run keeps checkpoints and events: the estimator's (a non-chief worker's scratch).
      available_values: the names every step offers ("loss", "global_step", the spec's scalars, ...).
      start_step: the global step the run starts from (0 outside training).
      summary_writer: the run's tf.summary writer (model_dir's events), or None: the run writes none.
      save_checkpoint: save_checkpoint(step, initial) -> the checkpoint's path; None outside training.
      latest_checkpoint: latest_checkpoint() -> the newest checkpoint's path or None; None outside training.
      graph_tensors: the names of tensors in model_fn's graph, which a step offers when a hook asks.
      global_step: the run's global-step variable (what TF1 hooks are given for tf.train.get_global_step()).
      summary_tensors: the names of the serialized Summary protos of the TF1 summary ops model_fn made (images,
        histograms), for the summary hook to write as TF1's did.
      summary_scope: the name scope of the tower that made those protos, left out of their tags.
      evaluation: whether the run is an evaluation (its global step is the evaluated checkpoint's).
      tf1_collections: model_fn's TF1 variable collections (key -> variables), which a TF1 hook's begin()
        found in tf.estimator's graph; None: none.
      step_read_after_update: the global step a hook is shown for the run of step N is N, not N - 1: model_fn's
        train_op writes the step itself (BERT's), and TF1's fetch of it in that run read the new value.
    """

    def __init__(self, model_dir, available_values, start_step=0, summary_writer=None,
                 save_checkpoint=None, latest_checkpoint=None, graph_tensors=(), global_step=None,
                 summary_tensors=(), summary_scope="", evaluation=False, tf1_collections=None,
                 step_read_after_update=False):
        self.model_dir = model_dir
        self.tf1_collections = dict(tf1_collections or {})
        self.step_read_after_update = step_read_after_update
        self.evaluation = evaluation  # an evaluation's run (its global step is the evaluated checkpoint's)
        self.summary_tensors = tuple(summary_tensors)
        self.summary_scope = summary_scope
        self.global_step = global_step
        self.start_step = start_step
        self.available_values = tuple(available_values)
        self.graph_tensors = frozenset(graph_tensors)
        self.steps_coming = 1  # how many steps the coming call runs (set by the train loop)
        self.summary_writer = summary_writer
        self._save_checkpoint = save_checkpoint
        self._latest_checkpoint = latest_checkpoint
        self.stop_requested = False

    def request_stop(self):
        """Asks the run to stop, as SessionRunContext.request_stop() did: training stops before its next call
        of the compiled loop (the other hooks still hear this call's after_step, then every hook's end),
        evaluation before its next batches, prediction after the current batch."""
        self.stop_requested = True

    def check_offered(self, names, asker):
        """Checks that a step offers each value a hook will ask for, so that the hook fails in begin().

        Args:
          names: value names, as value_name() gives them (one of model_fn's graph may end in ":N").
          asker: who asks, for the message ("LoggingTensorHook").

        Raises:
          ValueError: naming each of `names` that is neither in available_values nor a tensor of model_fn's
            graph, and what the step offers.
        """
        missing = sorted(n for n in set(names) - set(self.available_values)
                         if n.split(":")[0] not in self.graph_tensors)
        if missing:
            named = "; or a tensor model_fn names with tf.identity(t, name=...)" if self.graph_tensors else ""
            raise ValueError(f"{asker} asks for {', '.join(missing)}, which the step does not offer; it offers "
                             f"{', '.join(self.available_values)}{named}")

    def save_checkpoint(self, step, initial=False):
        """Saves a checkpoint of the run's state now (model.ckpt-<step> in model_dir) and tells the saving
        listeners (after_save(estimator, step): train_and_evaluate evaluates there).

        Args:
          step: the global step it is saved at (the current one).
          initial: whether it is the state before any step of this run, which saving listeners (they
            evaluate trained states) are not told of; TF1 CheckpointSaverListeners are, as in TF1.

        Returns:
          The checkpoint's path (its prefix).

        Raises:
          RuntimeError: outside training (evaluate, predict), which saves no checkpoint.
        """
        if self._save_checkpoint is None:
            raise RuntimeError("checkpoints can only be saved during training")
        return self._save_checkpoint(step, initial)

    def latest_checkpoint(self):
        """The newest checkpoint of the run.

        Returns:
          The newest complete checkpoint's path (prefix), or None: there is none, or the run keeps no
          checkpoints (evaluate, predict).
        """
        return self._latest_checkpoint() if self._latest_checkpoint else None

    def latest_checkpoint_step(self):
        """The global step of latest_checkpoint().

        Returns:
          The step, an int, or None where latest_checkpoint() is None.
        """
        latest = self.latest_checkpoint()
        return checkpoints.step_of(latest) if latest else None

    def write_scalars(self, step, scalars):
        """Writes scalars to the run's TensorBoard event file (model_dir's) and flushes it; does nothing
        where the run has no writer (evaluate, predict).

        Args:
          step: the global step to write them at.
          scalars: tag -> number (a Python or numpy scalar).
        """
        if self.summary_writer is not None:
            summaries.write_scalars(self.summary_writer, step, scalars)


class Hook:
    """Base class of hooks, in place of tf.estimator's SessionRunHook: every method is optional.

    Hooks are given to Estimator.train / evaluate / predict (hooks=...), to EstimatorSpec's training_hooks,
    evaluation_hooks and prediction_hooks, or to TrainSpec / EvalSpec; TF1 SessionRunHooks given there are
    wrapped to run as hooks. The methods stand for SessionRunHook's: begin for begin and after_create_session,
    before_step for before_run (names, not SessionRunArgs), after_step for after_run (the values, not
    SessionRunValues), end for end. steps_to_trigger is new: training runs several steps per call of its
    compiled loop, and a hook says how many may run before it hears of them. The base class takes no arguments.
    """

    def begin(self, context):
        """Called once per run (a train(), evaluate() or predict() call), before its first step.

        The place to check what the hook will ask for (context.check_offered) and to open what it writes to,
        as SessionRunHook.begin and after_create_session. The default does nothing.

        Args:
          context: the run's RunContext.
        """
        pass

    def steps_to_trigger(self, step):
        """How many steps training may run before this hook needs a loop boundary (to hear of a step).

        Before each call of the compiled loop, training asks every hook and runs the fewest steps any asks
        for (up to the call size RunConfig.steps_per_loop allows), so a hook that fires every N steps hears
        the very step it fires at. Evaluation and prediction do not ask. A hook that does not say hears every
        step (1), as a tf.estimator hook heard every session run: each step is then a call of its own.

        Args:
          step: the global step the coming call starts from.

        Returns:
          The number of steps, >= 1 (a float is rounded up), or None (or 0) when any number suits the hook.
        """
        return 1

    def before_step(self, step):
        """Called before each call of the compiled loop: the values this hook wants after it, as
        SessionRunHook.before_run's fetches, by name. The default asks for nothing.

        Args:
          step: training: the global step before the call; evaluation and prediction: the batches done
            before it (prediction ignores what is returned).

        Returns:
          A tuple (any iterable) of value names as value_name() gives them, each one the step offers
          (RunContext.available_values, or a tensor of model_fn's graph: RunContext.check_offered).
        """
        return ()

    def after_step(self, step, values, context):
        """Called after each call of the compiled loop, with the values asked for: SessionRunHook.after_run.

        Args:
          step: training: the global step after the call (its last step); evaluation and prediction: the
            batches done so far.
          values: name -> numpy value, for what the hooks (all of them) asked for in before_step (a name may be
            missing where the input ran out before the call's end), and "global_step": training's `step`, an
            evaluation's evaluated checkpoint's (there "loss" is the mean batch loss so far); {} in prediction.
          context: the run's RunContext; context.request_stop() ends the run after this call.
        """
        pass

    def end(self, step, context):
        """Called once after the run's last step, when the run ends without an error (a stop requested, the
        steps done, the input's end), as SessionRunHook.end.

        In training every hook's end runs even after another's raised, then the first error is raised (the
        checkpoint saver's end writes the final checkpoint). It is not called after a step or a hook raised,
        after an evaluation of no data, nor when a predict() generator is not run to its end. The default does
        nothing.

        Args:
          step: as after_step's: training's final global step, or the batches done.
          context: the run's RunContext.
        """
        pass


class PeriodicHook(Hook):
    """Base class of hooks that do something every N steps or every N seconds, as tf.estimator's
    SecondOrStepTimer timed them: the trigger says when, the subclass's `_fire` says what.

    Step triggers fall on multiples of N (the loop is cut there); a subclass's `aligned = False` makes them N
    steps after the last firing instead, `first = True` fires at a run's first loop boundary too. A seconds
    trigger fires at the first boundary, then at the first boundary N seconds after it last fired.

    Args:
      every_n_steps: fire every this many global steps (>= 1).
      every_n_secs: fire every this many seconds (>= 0; 0: at every boundary); when given, every_n_steps is
        ignored (tf.estimator's timer refused both).
      clock: the time source, in seconds (tests give a fake one).

    Raises:
      ValueError: neither every_n_steps nor every_n_secs given, every_n_steps < 1 or every_n_secs < 0.
    """

    first = False  # trigger at the first loop boundary of a run too
    aligned = True  # step triggers on multiples of N (else N steps after the last firing)

    def __init__(self, every_n_steps=None, every_n_secs=None, clock=time.time):
        if every_n_secs is not None:
            every_n_steps = None
        self._trigger = Trigger(every_n_steps, every_n_secs, clock, first=self.first, aligned=self.aligned)

    def steps_to_trigger(self, step):
        """See Hook.steps_to_trigger.

        Args:
          step: the global step the coming call starts from.

        Returns:
          Steps to the next step trigger (1 before a `first` one), or None for a seconds trigger.
        """
        return self._trigger.steps_to_trigger(step)

    def after_step(self, step, values, context):
        """See Hook.after_step: calls `_fire(step, values, context, elapsed)` when the trigger is due.

        Args:
          step: the global step after the call.
          values: the values asked for (see Hook.after_step).
          context: the run's RunContext.
        """
        if self._trigger.should_trigger(step):
            self._fire(step, values, context, self._trigger.update(step))

    def _fire(self, step, values, context, elapsed):
        """elapsed: (seconds, steps) since the last firing, None the first time."""
        raise NotImplementedError


class RateHook(PeriodicHook):
    """Base class of hooks that report a rate: it measures the time between its triggers and calls the
    subclass's `_report(step, seconds, steps, context)`; the first trigger only starts the clock (tracing and
    compiling are not timed). Arguments as PeriodicHook's."""

    first = True  # the first boundary only starts the clock: tracing is not timed

    def _fire(self, step, values, context, elapsed):
        if elapsed is not None and elapsed[0] > 0:
            self._report(step, *elapsed, context)

    def _report(self, step, seconds, steps, context):
        raise NotImplementedError


class HookWriter:
    """Where a TF1 hook's output_dir / summary_writer arguments send its summaries: the writer given, else a
    writer of its own for an output_dir other than the model dir (closed at the hook's end), else the run's
    (None where the run writes no events)."""

    def __init__(self, output_dir=None, summary_writer=None):
        self._output_dir, self._given = output_dir, summary_writer
        self.writer = None

    def open(self, context):
        self.writer = self._given or context.summary_writer
        if self._given is None and self._output_dir and \
                os.path.abspath(self._output_dir) != os.path.abspath(context.model_dir):
            self.writer = tf.summary.create_file_writer(self._output_dir)
        return self.writer

    def close(self, context):
        if self.writer is not None and self.writer is not self._given and self.writer is not context.summary_writer:
            self.writer.close()
