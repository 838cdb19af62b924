"""The outer train loop alone: calls cut where hooks fire, stop rules as hooks, the input running out."""

import numpy as np
import pytest
import tensorflow as tf

from common import hooks
from common.engine import train_loop
from common.engine.loops import LoopResult


class FakeSteps:
    """run_steps for the loop: `available` steps of input, loss = 1 / global step; `clock` advances by
    `seconds(count)` a call."""

    def __init__(self, available=None, seconds=lambda count: 0.0):
        self.now, self.seconds = 0.0, seconds
        self.step = 0
        self.available = available
        self.calls = []
        self.wanted = []

    def __call__(self, count, wanted):
        self.wanted.append(set(wanted))
        ran = count if self.available is None else min(count, self.available - self.step)
        self.calls.append(count)
        self.now += self.seconds(count)
        self.step += ran
        exhausted = self.available is not None and self.step >= self.available
        values = {"loss": tf.constant(1.0 / max(self.step, 1)), "learning_rate": tf.constant(0.1)}
        return LoopResult(ran, exhausted, values)


class Recorder(hooks.Hook):
    def __init__(self, wants=(), every=None):
        self.wants, self.every = tuple(wants), every
        self.seen, self.events = [], []

    def begin(self, context):
        self.events.append("begin")

    def steps_to_trigger(self, step):
        return self.every - step % self.every if self.every else None

    def before_step(self, step):
        return self.wants

    def after_step(self, step, values, context):
        self.seen.append((step, dict(values)))

    def end(self, step, context):
        self.events.append(("end", step))


def run(fake, hook_list, steps_per_loop=10, start=0):
    context = hooks.RunContext("/nonexistent", ("loss", "learning_rate", "global_step"), start_step=start)
    fake.step = start
    return train_loop.run(fake, lambda: fake.step, hook_list, context, steps_per_loop, clock=lambda: fake.now)


def test_max_steps_is_a_stop_hook_and_calls_are_cut_where_a_hook_fires():
    fake, recorder = FakeSteps(), Recorder(wants=("loss", "global_step"), every=4)
    final_loss = run(fake, [hooks.StopAtStepHook(last_step=10), recorder], steps_per_loop=10)
    assert fake.calls == [4, 4, 2]  # cut at 4 and 8 for the recorder, at 10 by the stop hook
    assert fake.wanted == [{"loss"}] * 3  # the global step is read outside the steps
    assert [step for step, _ in recorder.seen] == [4, 8, 10]
    assert recorder.events == ["begin", ("end", 10)]
    np.testing.assert_allclose(final_loss, 0.1)


def test_steps_count_from_the_start_step_and_hooks_get_only_what_they_asked_for():
    fake, recorder = FakeSteps(), Recorder(wants=("learning_rate",))
    run(fake, [hooks.StopAtStepHook(num_steps=5), recorder], steps_per_loop=3, start=20)
    assert fake.calls == [3, 2] and fake.step == 25
    assert recorder.seen[-1][0] == 25
    assert set(recorder.seen[-1][1]) == {"learning_rate", "global_step"}
    np.testing.assert_allclose(recorder.seen[-1][1]["learning_rate"], 0.1)


def test_the_loop_ends_when_the_input_runs_out_and_still_ends_the_hooks():
    fake, recorder = FakeSteps(available=7), Recorder()
    final_loss = run(fake, [recorder], steps_per_loop=5)
    assert fake.calls == [5, 5] and fake.step == 7
    assert recorder.events == ["begin", ("end", 7)]
    np.testing.assert_allclose(final_loss, 1 / 7)


def test_no_step_run_returns_none():
    fake, recorder = FakeSteps(available=0), Recorder()
    assert run(fake, [recorder]) is None
    assert recorder.seen == [] and recorder.events == ["begin", ("end", 0)]


def test_a_hook_that_requests_a_stop_ends_the_loop_after_that_call():
    class StopAt6(hooks.Hook):
        def steps_to_trigger(self, step):
            return None  # any number of steps a call suits it

        def after_step(self, step, values, context):
            if step >= 6:
                context.request_stop()

    fake = FakeSteps()
    run(fake, [StopAt6()], steps_per_loop=3)
    assert fake.calls == [3, 3] and fake.step == 6


def test_a_hook_raising_in_end_does_not_stop_the_hooks_after_it_and_is_raised_after_them():
    class Broken(Recorder):
        def end(self, step, context):
            raise RuntimeError("end failed")

    fake, first, after = FakeSteps(), Broken(), Recorder()
    with pytest.raises(RuntimeError, match="end failed"):
        run(fake, [hooks.StopAtStepHook(last_step=5), first, after])
    assert after.events == ["begin", ("end", 5)]


def test_a_hooks_float_trigger_and_a_float_last_step_give_calls_of_whole_steps():
    fake, recorder = FakeSteps(), Recorder()
    recorder.steps_to_trigger = lambda step: 2.5
    run(fake, [hooks.StopAtStepHook(last_step=7.25), recorder], steps_per_loop=10)
    assert fake.calls == [3, 3, 2] and all(isinstance(count, int) for count in fake.calls)


def test_a_hook_that_does_not_say_when_it_fires_hears_every_step():
    """As a tf.estimator hook heard every session run, whatever steps_per_loop allows."""
    class EveryStep(hooks.Hook):
        def __init__(self):
            self.steps = []

        def after_step(self, step, values, context):
            self.steps.append(step)

    fake, hook = FakeSteps(), EveryStep()
    run(fake, [hooks.StopAtStepHook(last_step=4), hook], steps_per_loop=10)
    assert fake.calls == [1, 1, 1, 1] and hook.steps == [1, 2, 3, 4]


def test_with_steps_per_loop_none_a_call_runs_what_fits_in_a_quarter_second_at_the_last_calls_pace():
    """The first call (which traces and compiles: 1 s here) runs one step, and so the second at its pace;
    then 2 ms steps run up to 125 a call, cut where the hooks fire; a slow model (0.4 s a step) runs one step
    a call."""
    fake, recorder = FakeSteps(seconds=lambda count: 1.0 if not fake.calls[:-1] else 0.002 * count), Recorder(
        every=100)
    run(fake, [hooks.StopAtStepHook(last_step=400), recorder], steps_per_loop=None)
    assert train_loop.AUTO_CALL_SECONDS == 0.25
    assert fake.calls == [1, 1, 98, 100, 100, 100]
    slow = FakeSteps(seconds=lambda count: 0.4 * count)
    run(slow, [hooks.StopAtStepHook(last_step=5), Recorder(every=100)], steps_per_loop=None)
    assert slow.calls == [1, 1, 1, 1, 1]
