"""train_and_evaluate's pieces alone: the specs' checks and the eval throttle."""

import pytest

import common
from common.training import evaluations


class FakeEstimator:
    def __init__(self):
        self.evaluated = []

    def evaluate(self, input_fn, steps, hooks, name, checkpoint_path=None):
        self.evaluated.append(name)
        return {"loss": 0.5}


def test_the_throttle_evaluates_at_the_first_save_then_once_its_seconds_have_passed():
    now = [1000.0]
    spec = common.EvalSpec(lambda: None, name="validation", throttle_secs=60)
    listener = evaluations.Evaluations([spec], None, clock=lambda: now[0])
    estimator = FakeEstimator()
    for seconds, step in ((0, 10), (30, 20), (59.5, 30), (61, 40), (100, 50), (121, 60)):
        now[0] = 1000.0 + seconds
        listener.after_save(estimator, step)
    assert estimator.evaluated == ["validation"] * 3
    assert listener.last_step == {"validation": 60}  # evaluated at 10, 40 and 60


@pytest.mark.parametrize("kwargs, words", [
    (dict(steps=0), "EvalSpec: steps must be > 0 or None, got 0"),
    (dict(throttle_secs=-1), "EvalSpec: throttle_secs must be >= 0, got -1"),
    (dict(start_delay_secs=-1), "EvalSpec: start_delay_secs must be >= 0, got -1"),
])
def test_eval_spec_refuses_bad_values(kwargs, words):
    with pytest.raises(ValueError, match=words):
        common.EvalSpec(lambda: None, **kwargs)


def test_train_spec_refuses_max_steps_of_zero():
    with pytest.raises(ValueError, match="TrainSpec: max_steps must be > 0, got 0"):
        common.TrainSpec(lambda: None, max_steps=0)
