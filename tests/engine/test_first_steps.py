"""A run's first steps through the step alone while a thread compiles the loop: the same steps on the same
elements, in order; the loop taking over once compiled; a compile's error raised in the run's thread."""

import threading
import time

import pytest
import tensorflow as tf

from common.engine import first_steps, loops
from common.engine.first_steps import FirstStepsWhileCompiling
from tests.engine.test_loops import counting_step


class GatedLoop:
    """A CompiledLoop whose compiling call (of no steps) waits for `gate`, then raises `error` if one is set."""

    def __init__(self, loop, error=None):
        self.loop, self.error = loop, error
        self.gate = threading.Event()
        self.counts = []

    @property
    def has_run(self):
        return self.loop.has_run

    def __call__(self, iterator, num_steps):
        if num_steps == 0:
            assert self.gate.wait(60)
            if self.error:
                raise self.error
        self.counts.append(num_steps)
        return self.loop(iterator, num_steps)


def _counting_run(error=None):
    total = tf.Variable(0, dtype=tf.int64)
    step = tf.function(counting_step(total), autograph=False)
    loop = GatedLoop(loops.make_train_loop(step, ("loss", "batch")), error)
    return total, step, loop, iter(tf.data.Dataset.range(1, 1000, output_type=tf.int64))


def _until_the_loop_runs(calls, count):
    """Calls' results until one ran `count` steps (the loop's): the thread ends when it ends."""
    results = []
    deadline = time.monotonic() + 60
    while not results or results[-1].steps != count:
        assert time.monotonic() < deadline
        results.append(calls(count))
    return results


def test_the_first_steps_run_alone_in_order_until_the_loop_has_compiled():
    total, step, loop, numbers = _counting_run()
    with FirstStepsWhileCompiling(loop, step, numbers) as calls:
        assert calls.first_step_alone
        first = [calls(5) for _ in range(3)]
        assert [(r.steps, float(r.values["batch"])) for r in first] == [(1, 1.0), (1, 2.0), (1, 3.0)]
        assert loop.counts == []  # the compiling call has not returned
        loop.gate.set()
        after = _until_the_loop_runs(calls, 5)
    ran = 3 + sum(r.steps for r in after)
    assert [r.steps for r in after[:-1]] == [1] * (len(after) - 1)
    assert loop.counts == [0, 5] and float(after[-1].values["batch"]) == ran  # nothing skipped, nothing twice
    assert int(total.numpy()) == ran * (ran + 1) // 2
    assert step.experimental_get_tracing_count() == 1  # the loop and the steps alone: one trace of the step


def test_a_short_run_runs_every_step_alone_and_never_compiles_the_loop():
    total, step, loop, numbers = _counting_run()  # (a compile started would wait on the gate, never opened)
    with FirstStepsWhileCompiling(loop, step, numbers, to_go=first_steps.FEW_STEPS) as calls:
        assert calls.first_step_alone
        assert [float(calls(50).values["batch"]) for _ in range(4)] == [1.0, 2.0, 3.0, 4.0]
    assert loop.counts == [] and not loop.has_run and int(total.numpy()) == 10


def test_steps_to_go_is_the_fewest_of_the_steps_asked_and_the_dataset_s_known_length():
    ten = tf.data.Dataset.range(10).batch(3)
    assert first_steps.steps_to_go(ten) == 4 and first_steps.steps_to_go(ten, 2) == 2
    assert first_steps.steps_to_go(ten.repeat()) is None and first_steps.steps_to_go(ten.repeat(), 500) == 500
    assert first_steps.steps_to_go(ten.filter(lambda x: True)) is None  # a length TensorFlow does not know


def test_a_loop_that_has_run_or_functions_run_eagerly_take_the_loop_from_the_first_call():
    total, step, loop, numbers = _counting_run()
    loop.gate.set()
    assert loop(numbers, 2).steps == 2
    with FirstStepsWhileCompiling(loop, step, numbers) as calls:
        assert not calls.first_step_alone and calls(3).steps == 3
    assert FirstStepsWhileCompiling(loop.loop, None, numbers).first_step_alone is False  # no step to run alone
    assert not FirstStepsWhileCompiling(_counting_run()[2], step, numbers, steps_per_loop=5).first_step_alone
    tf.config.run_functions_eagerly(True)
    try:
        assert not FirstStepsWhileCompiling(_counting_run()[2], step, numbers).first_step_alone
    finally:
        tf.config.run_functions_eagerly(False)


def test_an_error_compiling_the_loop_is_raised_in_the_run_s_thread():
    _, step, loop, numbers = _counting_run(error=RuntimeError("the loop did not compile"))
    with pytest.raises(RuntimeError, match="the loop did not compile"):
        with FirstStepsWhileCompiling(loop, step, numbers) as calls:
            assert calls(4).steps == 1
            loop.gate.set()
            _until_the_loop_runs(calls, 4)  # a call once the thread has ended raises its error
    assert loop.counts == []


def test_a_run_that_ends_while_the_loop_compiles_waits_for_it_and_raises_its_error():
    _, step, loop, numbers = _counting_run(error=RuntimeError("the loop did not compile"))
    with pytest.raises(RuntimeError, match="the loop did not compile"):
        with FirstStepsWhileCompiling(loop, step, numbers) as calls:
            assert calls(4).steps == 1
            loop.gate.set()  # the run ends here, its one step done: leaving waits for the thread
    _, step, loop, numbers = _counting_run(error=RuntimeError("the loop did not compile"))
    with pytest.raises(ValueError, match="the run's own error"):  # not hidden by the compile's
        with FirstStepsWhileCompiling(loop, step, numbers) as calls:
            calls(4)
            loop.gate.set()
            raise ValueError("the run's own error")
