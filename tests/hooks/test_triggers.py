"""Trigger: when periodic hooks fire and when train_and_evaluate may evaluate again."""

import pytest

from common.hooks import triggers


def test_step_triggers_fall_on_multiples():
    timer = triggers.Trigger(every_steps=5)
    assert timer.steps_to_trigger(7) == 3
    assert not timer.should_trigger(7)
    assert timer.should_trigger(10)
    timer.update(10)
    assert not timer.should_trigger(14)
    assert timer.should_trigger(15)
    with pytest.raises(ValueError, match="exactly one"):
        triggers.Trigger(every_steps=5, every_secs=1)


def test_seconds_triggers_fire_first_then_after_the_period():
    now = [100.0]
    timer = triggers.Trigger(every_secs=10, clock=lambda: now[0])
    assert timer.should_trigger(1) and timer.steps_to_trigger(1) is None
    assert timer.update(1) is None
    now[0] = 109.0
    assert not timer.should_trigger(5)
    now[0] = 110.0
    assert timer.should_trigger(6)
    assert timer.update(6) == (10.0, 5)


def test_a_zero_second_period_fires_at_every_check_and_first_fires_a_step_trigger_at_once():
    timer = triggers.Trigger(every_secs=0)
    for step in range(3):
        assert timer.should_trigger(step)
        timer.update(step)
    first = triggers.Trigger(every_steps=100, first=True)
    assert first.steps_to_trigger(7) == 1 and first.should_trigger(7)
    first.update(7)
    assert first.steps_to_trigger(7) == 93 and not first.should_trigger(99) and first.should_trigger(100)


@pytest.mark.parametrize("steps, secs", [(0, None), (None, -1)])
def test_a_period_that_is_not_positive_is_refused(steps, secs):
    with pytest.raises(ValueError, match="trigger period must be positive"):
        triggers.Trigger(every_steps=steps, every_secs=secs)
