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
    """The name a hook asks for a value by: a string (a trailing ":0" dropped),
    a tensor of model_fn's graph (its name, without FIRST_TOWER_SCOPE), or the global-step variable."""
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
    """What a hook may see and do during a run.

    available_values: the names every step offers; graph_tensors: the names of
    tensors in model_fn's graph, which a step offers when a hook asks;
    global_step: the run's global-step variable (what TF1 hooks are given
    for tf.train.get_global_step()); summary_tensors: the names of the
    serialized Summary protos of the TF1 summary ops model_fn made (images,
    histograms), for the summary hook to write as TF1's did, without the
    name scope `summary_scope` of the tower that made them; tf1_collections: model_fn's TF1 variable
    collections (key -> variables), which a TF1 hook's begin() found in tf.estimator's graph.
    """

    def __init__(self, model_dir, available_values, start_step=0, summary_writer=None,
                 save_checkpoint=None, latest_checkpoint=None, graph_tensors=(), global_step=None,
                 summary_tensors=(), summary_scope="", evaluation=False, tf1_collections=None):
        self.model_dir = model_dir
        self.tf1_collections = dict(tf1_collections or {})
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
        """Steps until this hook wants a loop boundary, or None when any number suits it. A hook that does
        not say hears every step (1), as a tf.estimator hook heard every session run."""
        return 1

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


class RateHook(PeriodicHook):
    """Measures the time between its triggers; subclasses report the rate."""

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
