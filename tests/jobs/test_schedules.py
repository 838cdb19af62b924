"""Schedules equal their closed forms at, before and after each boundary."""

import pytest

from common.jobs import schedules


def value(schedule, step):
    return float(schedule(step))


def test_piecewise_constant_tf1_meaning():
    schedule = schedules.piecewise_constant([100, 200], [1.0, 0.5, 0.1])
    expected = {0: 1.0, 99: 1.0, 100: 1.0, 101: 0.5, 200: 0.5, 201: 0.1, 10**6: 0.1}
    for step, rate in expected.items():
        assert value(schedule, step) == pytest.approx(rate), step


def test_exponential_decay_closed_form():
    smooth = schedules.exponential_decay(0.1, decay_steps=100, decay_rate=0.5)
    stairs = schedules.exponential_decay(0.1, decay_steps=100, decay_rate=0.5, staircase=True)
    for step in (0, 50, 99, 100, 101, 250):
        assert value(smooth, step) == pytest.approx(0.1 * 0.5 ** (step / 100), rel=1e-6)
        assert value(stairs, step) == pytest.approx(0.1 * 0.5 ** (step // 100), rel=1e-6)


def test_by_name_and_errors():
    assert value(schedules.by_name("constant", 0.3), 12345) == pytest.approx(0.3)
    piecewise = schedules.by_name("piecewise", 0.1, boundaries=[10], multipliers=[1, 0.1])
    assert value(piecewise, 11) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="2 boundaries need 3 values, got 2"):
        schedules.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="must increase"):
        schedules.piecewise_constant([5, 5], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="decay_steps must be > 0"):
        schedules.exponential_decay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="--lr_schedule='cosine'"):
        schedules.by_name("cosine", 0.1)
