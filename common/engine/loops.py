"""Compiled loops that run many steps per Python call.

Every tf.function of the engine is traced without AutoGraph: tf.estimator
called model_fn in a TF1 graph, untransformed, and converting the
framework's own code (and model_fn's) cost seconds of start-up per trace
that nothing needed; the loops are written as tf.while_loop.

Each loop takes an iterator and a step count (a tensor inside, so a new
count does not retrace) and stops early when the input runs out; its
result is a LoopResult. The train loop also stops right after a step whose
loss is not finite, so the step a NaN hook names is the one that diverged,
and (across hosts) after the step that carried a host's stop signal.
"""

import contextlib
import traceback
import weakref
from typing import Callable, Dict, Hashable, NamedTuple

import tensorflow as tf

from common.engine import inputs
from common.hooks.signals import STOP_VALUE


@contextlib.contextmanager
def releasing_failed_frames():
    """On an error, clears the locals of the finished frames the error passed through before it goes on: an
    input iterator they held (its prefetch threads running a tf.py_function) is freed now, not at interpreter
    exit, where TensorFlow's teardown of it waits for a thread that waits for the interpreter: a program whose
    train() or evaluate() raised, uncaught, never ended. The traceback still names every line."""
    try:
        yield
    except BaseException as error:
        traceback.clear_frames(error.__traceback__)
        raise


class LoopResult(NamedTuple):
    """What a call of a compiled loop did."""

    steps: int                     # steps (batches) run
    exhausted: bool                # the input ran out
    values: Dict[str, tf.Tensor]   # train: the last step's values; eval: the batches' summed totals


class CompiledLoop:
    """loop(iterator, num_steps: a Python int) -> LoopResult, over `function`,
    the tf.function that returns (steps, exhausted, values) as tensors.

    A call of the tf.function matches its arguments against its traces first
    (hashing every component of the iterator's spec: ~0.1 ms a call for a
    dozen features, 6% of a premade estimator's step); the concrete function
    for the iterator a run keeps calling is looked up once instead (held by a
    weak reference: a finished run's iterator and its buffers are freed).
    """

    def __init__(self, function):
        self.function = function
        self._iterator, self._concrete = lambda: None, None
        self._counts: Dict[int, tf.Tensor] = {}
        self.has_run = False  # a call has returned: the loop is compiled (for its iterators' signature)

    def __call__(self, iterator, num_steps):
        """A call of no steps reads no input: it traces and compiles the loop (common.engine.first_steps)."""
        if num_steps not in self._counts:
            self._counts[num_steps] = tf.constant(num_steps, tf.int32)
        with inputs.naming_bad_inputs(getattr(iterator, "element_spec", None)):
            steps, exhausted, values = self._callable_for(iterator)(iterator, self._counts[num_steps])
        self.has_run = True
        return LoopResult(int(steps), bool(exhausted), values)

    def trace(self, iterator):
        """Traces the loop for `iterator` without running it (start-up is timed by phase, common.engine.startup)."""
        with inputs.naming_bad_inputs(getattr(iterator, "element_spec", None)):
            self._callable_for(iterator)

    def _callable_for(self, iterator):
        if tf.config.functions_run_eagerly():  # (debugging model_fn: a concrete function would not run eagerly)
            return self.function
        if iterator is not self._iterator():
            self._concrete = self.function.get_concrete_function(iterator, tf.TensorSpec([], tf.int32))
            self._iterator = weakref.ref(iterator)
        return self._concrete


def _first_element(iterator, wanted):
    """The element of a loop's first step, taken only when a step is `wanted` (a tensor)."""
    return tf.cond(wanted, iterator.get_next_as_optional, lambda: tf.experimental.Optional.empty(iterator.element_spec))


def run_one_step(step, iterator):
    """LoopResult of step(the iterator's next element), called from Python: (0, exhausted) at the input's end."""
    try:  # (taken here, not inside the step: a step whose get_next fails could still count itself)
        batch = next(iterator)
    except StopIteration:
        return LoopResult(0, True, {})
    with inputs.naming_bad_inputs(getattr(iterator, "element_spec", None)):
        return LoopResult(1, False, step(batch))


def make_train_loop(step_fn, value_names, jit_compile=False):
    """loop(iterator, num_steps) -> LoopResult.

    step_fn(batch) must return a dict of float32 scalars named `value_names`.
    """
    step = tf.function(step_fn, jit_compile=True, autograph=False) if jit_compile else step_fn

    @tf.function(autograph=False)
    def loop(iterator, num_steps):
        # The element of each step is taken at the end of the step before (the first before the loop), and not
        # after the last: a branch around the step itself would capture every variable (for BERT, 0.2 s more
        # to trace before the first step, and an If op of as many inputs run at every step).
        def more(steps, go_on, values, element):
            del values
            return tf.logical_and(tf.logical_and(steps < num_steps, go_on), element.has_value())

        def one_step(steps, go_on, values, element):
            new_values = step(element.get_value())
            go_on = tf.math.is_finite(new_values["loss"])  # go on only after a step whose loss is finite
            if STOP_VALUE in new_values:  # every host ends this loop at the step that carried a stop signal
                go_on = tf.logical_and(go_on, new_values[STOP_VALUE] <= 0)
            steps += 1
            element = tf.cond(tf.logical_and(steps < num_steps, go_on), iterator.get_next_as_optional,
                              lambda: tf.experimental.Optional.empty(iterator.element_spec))
            return steps, go_on, new_values, element

        start = (tf.constant(0), tf.constant(True), {name: tf.constant(0.0) for name in value_names},
                 _first_element(iterator, num_steps > 0))
        steps, go_on, values, element = tf.while_loop(more, one_step, start)
        exhausted = tf.logical_and(tf.logical_and(steps < num_steps, go_on), tf.logical_not(element.has_value()))
        return steps, exhausted, values

    return CompiledLoop(loop)


def make_fetching_step(step_fn, jit_compile=False):
    """fetch(iterator) -> LoopResult of one step whose values may be any tensors
    (a loop carries only the float32 scalars of make_train_loop), for a step
    at which a hook asks for model_fn's tensors."""
    step = tf.function(step_fn, jit_compile=jit_compile or None, reduce_retracing=True, autograph=False)
    return lambda iterator: run_one_step(step, iterator)


def make_eval_loop(step_fn, total_names):
    """loop(iterator, num_steps) -> LoopResult whose values are the summed totals.

    num_steps < 0 runs until the input is exhausted.
    """

    @tf.function(autograph=False)
    def loop(iterator, num_steps):
        def wanted(steps):
            return tf.logical_or(num_steps < 0, steps < num_steps)

        def more(steps, totals, element):
            del totals
            return tf.logical_and(wanted(steps), element.has_value())

        def one_batch(steps, totals, element):  # (its element taken before it: see make_train_loop)
            batch_totals = step_fn(element.get_value())
            steps += 1
            element = tf.cond(wanted(steps), iterator.get_next_as_optional,
                              lambda: tf.experimental.Optional.empty(iterator.element_spec))
            return steps, {name: totals[name] + batch_totals[name] for name in total_names}, element

        start = (tf.constant(0), {name: tf.constant(0.0, tf.float64) for name in total_names},
                 _first_element(iterator, wanted(0)))
        steps, totals, element = tf.while_loop(more, one_batch, start)
        return steps, tf.logical_and(wanted(steps), tf.logical_not(element.has_value())), totals

    return CompiledLoop(loop)


class LoopCache:
    """The compiled loops of one Estimator, each built once per key: a loop
    traces model_fn when first called, and a retrace would cost the same again."""

    def __init__(self):
        self._loops: Dict[Hashable, Callable] = {}

    def get(self, key, build):
        if key not in self._loops:
            self._loops[key] = build()
        return self._loops[key]
