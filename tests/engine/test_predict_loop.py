"""The prediction loop: the keys asked for, one example (or batch) at a time, in order; hooks may stop it."""

import numpy as np
import pytest
import tensorflow as tf

from common import hooks
from common.engine import predict_loop

BATCHES = tf.data.Dataset.range(7).batch(3)  # batches of 3, 3, 1


def double(features):
    return {"value": features * 2, "square": features * features}


def context():
    return hooks.RunContext("/nonexistent", ())


def test_examples_come_one_at_a_time_in_input_order_with_the_keys_asked_for():
    got = list(predict_loop.run(double, BATCHES, [], context(), predict_keys="square"))
    assert [sorted(p) for p in got] == [["square"]] * 7
    assert [int(p["square"]) for p in got] == [i * i for i in range(7)]
    batches = list(predict_loop.run(double, BATCHES, [], context(), yield_single_examples=False))
    assert [len(b["value"]) for b in batches] == [3, 3, 1]


def test_one_prediction_tensor_yields_arrays_and_an_unknown_key_is_refused():
    got = list(predict_loop.run(lambda f: {"predictions": f + 1}, BATCHES, [], context(), predictions_dict=False))
    np.testing.assert_array_equal(np.array(got), np.arange(1, 8))
    with pytest.raises(ValueError, match=r"predict_keys \['cube'\] are not among the predictions"):
        list(predict_loop.run(double, BATCHES, [], context(), predict_keys=["cube"]))


def test_hooks_see_each_batch_as_a_step_and_may_stop_early():
    class StopAfterTwo(hooks.Hook):
        def __init__(self):
            self.steps, self.ended = [], None

        def after_step(self, step, values, ctx):
            self.steps.append(step)
            if step == 2:
                ctx.request_stop()

        def end(self, step, ctx):
            self.ended = step

    hook = StopAfterTwo()
    got = list(predict_loop.run(double, BATCHES, [hook], context()))
    assert len(got) == 6 and hook.steps == [1, 2] and hook.ended == 2
