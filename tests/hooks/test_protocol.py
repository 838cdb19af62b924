"""The hook protocol: how a hook names the values it wants, what the run offers, when a periodic hook fires."""

import pytest
import tensorflow as tf

from common import hooks
from tests.hooks import FakeClock, context


def test_a_value_is_asked_for_by_name_by_tensor_or_as_the_global_step():
    assert hooks.value_name("loss") == "loss" and hooks.value_name("softmax:0") == "softmax"
    assert hooks.value_name(tf.Variable(0, dtype=tf.int64, name="global_step")) == "global_step"

    @tf.function
    def named():
        assert hooks.value_name(tf.identity(1.0, name="probabilities")) == "probabilities"
        return 0

    named()
    with pytest.raises(ValueError, match="a hook asks for a value by name"):
        hooks.value_name(3.0)


def test_what_no_step_offers_is_refused_before_training_naming_what_is():
    run = hooks.RunContext("/x", ("loss", "global_step"), graph_tensors=("logits",))
    run.check_offered(["loss", "logits:0"], "MyHook")
    with pytest.raises(ValueError, match="MyHook asks for accuracy, which the step does not offer; it offers loss, "
                                         "global_step; or a tensor model_fn names"):
        run.check_offered(["accuracy", "loss"], "MyHook")
    with pytest.raises(RuntimeError, match="checkpoints can only be saved during training"):
        run.save_checkpoint(5)
    assert run.latest_checkpoint() is None and not run.stop_requested
    run.request_stop()
    assert run.stop_requested


def test_a_periodic_hook_fires_on_multiples_of_its_steps_and_reports_the_time_between():
    class Every(hooks.PeriodicHook):
        def __init__(self, clock):
            super().__init__(every_n_steps=4, clock=clock)
            self.fired = []

        def _fire(self, step, values, run, elapsed):
            self.fired.append((step, elapsed))

    clock = FakeClock()
    hook, run = Every(clock), context()
    assert hook.steps_to_trigger(0) == 4 and hook.steps_to_trigger(5) == 3
    for step in (2, 4, 6, 8):
        clock.now += 1.0
        hook.after_step(step, {}, run)
    assert hook.fired == [(4, None), (8, (2.0, 4))]
