"""A run's first steps through its step function alone, while a thread compiles the loop.

A compiled loop's first call traces and compiles it: for the conformance census program (wide and deep, one
tower) 0.41 s of the 0.9 s from train() to its first step, where the step function alone compiles and runs its
first step in 0.24 s: the while loop around it (its lowering, a loop variable for each variable it captures,
TensorFlow's checks of every node) is the difference. The step the loop calls is the mode's probe, already
traced (common.engine.model_builder), so the first steps run through it, one per call, while a thread traces the
loop and compiles it by a call of no steps (which reads no input); the loop takes over once that is done. The
steps are the same steps on the same elements in the same order; only how many run per call changes. A run
known to be short (at most FEW_STEPS to go, by its steps or its dataset's length) runs every step alone and
never compiles the loop: it would end about when its loop had compiled (tests' runs of a few steps compiled
twice over, 11% more time for the suite's estimator tests). A run given RunConfig(steps_per_loop=N) runs the
loop from its first call, every call N steps (or to a hook's step) as that asks.
"""

import threading

import tensorflow as tf

from common.engine import inputs, loops

FEW_STEPS = 100  # about as many steps as a small model runs alone while its loop compiles (census: 0.3 s)


def steps_to_go(dataset, steps=None):
    """The most steps a run over `dataset` can take: `steps` (None: no limit) or the dataset's number of
    elements where TensorFlow knows it; None where neither bounds it."""
    length = int(dataset.cardinality())  # (INFINITE and UNKNOWN are negative)
    bounds = [n for n in (steps, length if length >= 0 else None) if n is not None]
    return min(bounds) if bounds else None


class _Compiling:
    """A thread tracing `loop` for `iterator` and compiling it (a call of no steps)."""

    def __init__(self, loop, iterator):
        self._error = None
        self._thread = threading.Thread(target=self._compile, args=(loop, iterator), name="compiling the loop")
        self._thread.start()

    def _compile(self, loop, iterator):
        try:
            loop(iterator, 0)
        except BaseException as error:  # noqa: BLE001 -- raised in the run's own thread (done, wait)
            self._error = error

    def done(self):
        """Whether the loop is compiled; raises what compiling it raised."""
        if self._thread.is_alive():
            return False
        self.wait()
        return True

    def wait(self):
        """Waits for the compile to end; raises what it raised."""
        self.join()
        if self._error is not None:
            raise self._error

    def join(self):
        self._thread.join()


class FirstStepsWhileCompiling:
    """A context giving run(count) -> loops.LoopResult for the calls of one run over `iterator`: one step
    through `step` (the tf.function `loop`, a CompiledLoop, calls, traced for the iterator's elements) per call
    until `loop`, compiling on a thread from the first call, has compiled; then `loop`, `count` steps. A run
    with at most FEW_STEPS `to_go` (steps_to_go) runs all its steps alone. With no `step`, a steps_per_loop set
    (RunConfig's: calls of that many steps, as asked), a loop that has run before, or functions run eagerly, the
    loop from the first call. Leaving the context waits for the thread;
    left without an error, raises what compiling raised."""

    def __init__(self, loop, step, iterator, to_go=None, steps_per_loop=None):
        self._loop, self._step, self._iterator = loop, step, iterator
        self._compiling = None
        self._direct = (step is None or steps_per_loop is not None or loop.has_run
                        or tf.config.functions_run_eagerly())
        self._alone = not self._direct and to_go is not None and to_go <= FEW_STEPS

    @property
    def first_step_alone(self):
        """Whether the first call runs the step alone (the loop compiling on a thread meanwhile, or never, for a
        short run): no loop to trace before it."""
        return not self._direct

    def __enter__(self):
        return self

    def __call__(self, count):
        if self._alone:
            return loops.run_one_step(self._step, self._iterator)
        if not self._direct:
            if self._compiling is None:
                # (in the caller's scope: a trace the probe's does not serve happens here, not in the thread)
                self._step.get_concrete_function(inputs.element_signature(self._iterator))
                self._compiling = _Compiling(self._loop, self._iterator)
            if not self._compiling.done():
                return loops.run_one_step(self._step, self._iterator)
            self._direct = True
        return self._loop(self._iterator, count)

    def __exit__(self, error_type, error, traceback):
        self._iterator = None  # (a run's iterator outliving a failed run hangs the interpreter's exit: see loops)
        if self._compiling is None:
            return
        if error_type is None:
            self._compiling.wait()
        else:
            self._compiling.join()
