"""The outer evaluation loop alone: totals summed over calls, steps honoured, the loss a mean of batch means."""

import os
import re

import numpy as np
import pytest
import tensorflow as tf

from common import hooks
from common.engine import eval_loop
from common.engine.loops import LoopResult
from common.spec import metrics
from common.state import summaries


def batches_of(losses, correct):
    """run_batches over per-batch (mean loss, examples, correct) data, in calls of `count` batches."""
    position = [0]

    def run_batches(count, wanted=()):
        assert not wanted  # (no test hook asks for a tensor of model_fn's graph here)
        chunk = list(zip(losses, correct))[position[0]:position[0] + count]
        position[0] += len(chunk)
        totals = {"count": sum(len(c) for _, c in chunk), "batch_loss_sum": sum(loss for loss, _ in chunk),
                  "batches": len(chunk), "accuracy/sum": sum(sum(c) for _, c in chunk),
                  "accuracy/weight": sum(len(c) for _, c in chunk)}
        exhausted = position[0] >= len(losses)
        return LoopResult(len(chunk), exhausted, {k: tf.constant(v, tf.float64) for k, v in totals.items()})

    return run_batches


def test_totals_add_up_over_calls_and_the_loss_is_the_mean_of_the_batch_losses():
    """As tf.estimator's loss metric: a short last batch weighs as much as a full one (metrics are per example)."""
    losses, correct = [1.0, 2.0, 4.0], [[1, 0, 1, 1], [1, 1, 0, 0], [0]]  # the last batch has one example
    totals = eval_loop.run(batches_of(losses, correct), [], hooks.RunContext("/x", ("loss",)), None, 2)
    accuracy = metrics.accuracy(tf.constant([0]), tf.constant([0]))  # its result reads sum / weight
    results = eval_loop.results(totals, {"accuracy": accuracy.result})
    assert results["accuracy"] == pytest.approx(5 / 9)
    assert results["loss"] == pytest.approx((1.0 + 2.0 + 4.0) / 3)


def test_steps_stop_the_evaluation_and_hooks_see_the_running_loss():
    seen = []

    class Watch(hooks.Hook):
        def after_step(self, step, values, context):
            seen.append((step, float(values["loss"])))

    totals = eval_loop.run(batches_of([1.0, 3.0, 5.0], [[1, 1]] * 3), [Watch()], hooks.RunContext("/x", ("loss",)),
                           steps=2, steps_per_loop=1)
    assert totals["count"] == 4
    assert seen == [(1, 1.0), (2, 2.0)]


def test_a_hook_asking_for_a_tensor_gets_it_from_the_last_batch_of_each_call():
    batches, fetched = batches_of([1.0, 2.0, 4.0, 5.0], [[1, 0], [1, 1], [0, 0], [1]]), []

    def fetch(named):  # (one batch, with its "logits": the batch's number)
        result = batches(1)
        fetched.append(named)
        return result._replace(values={**result.values, "logits": tf.constant(float(len(fetched)))})

    class Asks(hooks.Hook):
        seen = []

        def before_step(self, step):
            return ("logits", "global_step")

        def after_step(self, step, values, context):
            self.seen.append((step, float(values["logits"]), values["global_step"], float(values["loss"])))

    context = hooks.RunContext("/x", ("loss", "global_step"), global_step=tf.Variable(7, dtype=tf.int64))
    totals = eval_loop.run(eval_loop.fetching_last(batches, fetch), [Asks()], context, None, 2)
    assert fetched == [("logits",)] * 2  # (the global step is the evaluated checkpoint's, not a tensor's)
    assert Asks.seen == [(2, 1.0, 7, 1.5), (4, 2.0, 7, 3.0)]
    assert (totals["count"], totals["batches"], totals["accuracy/sum"]) == (7, 4, 4)


def test_an_input_without_data_is_an_error():
    with pytest.raises(ValueError, match="evaluate: input_fn yielded no data"):
        eval_loop.run(batches_of([], []), [], hooks.RunContext("/x", ("loss",)), None, 10)


def test_write_results_puts_named_evaluations_in_their_own_folder(tmp_path):
    eval_loop.write_results(str(tmp_path), "validation", {"accuracy": 0.75, "loss": 0.5, "global_step": 30})
    assert os.path.isdir(tmp_path / "eval_validation")
    scalars = summaries.read_scalars(str(tmp_path / "eval_validation"))
    assert scalars == {"accuracy": [(30, 0.75)], "loss": [(30, 0.5)]}
    np.testing.assert_equal(summaries.read_scalars(str(tmp_path / "eval")), {})


def test_it_logs_tf_estimators_progress_lines(caplog):
    caplog.set_level("INFO", logger="tensorflow")  # (another test may have left TensorFlow's logger at WARNING)
    batches = batches_of([1.0] * 40, [[1]] * 40)
    eval_loop.run(batches, [], hooks.RunContext("/x", ("loss",)), steps=40, steps_per_loop=1)
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Evaluation [")]
    assert progress == [f"Evaluation [{n}/40]" for n in range(4, 41, 4)]  # a tenth of the steps apart
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("Starting evaluation at ") and messages[-1].startswith("Finished evaluation at ")
    assert re.fullmatch(r"Finished evaluation at \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d", messages[-1])  # (TF 2.15's)
    assert messages[-2].startswith("Inference Time : ")
    caplog.clear()
    eval_loop.run(batches_of([1.0] * 3, [[1]] * 3), [hooks.Hook()], hooks.RunContext("/x", ("loss",)), None, 2)
    assert not [r.getMessage() for r in caplog.records if r.getMessage().startswith("Evaluation [")]  # (steps None:
    # TF 2.15 logged no progress)


def test_the_results_line_is_tf_estimators(caplog, tmp_path):
    caplog.set_level("INFO", logger="tensorflow")
    results = {"loss": np.float32(0.76205826), "accuracy": np.float32(0.3125), "global_step": np.int64(20)}
    eval_loop.write_results(str(tmp_path), None, results, str(tmp_path / "model.ckpt-20"))
    assert [r.getMessage() for r in caplog.records] == [  # (TF 2.15's, verbatim but for the path)
        "Saving dict for global step 20: accuracy = 0.3125, global_step = 20, loss = 0.76205826",
        f"Saving 'checkpoint_path' summary for global step 20: {tmp_path / 'model.ckpt-20'}"]


def test_with_no_hook_to_hear_them_a_call_runs_many_batches():
    calls = []
    batches = batches_of([1.0] * 250, [[1]] * 250)
    counting = lambda count, wanted: calls.append(count) or batches(count)  # noqa: E731
    totals = eval_loop.run(counting, [], hooks.RunContext("/x", ("loss",)), None, 1)
    assert totals["count"] == 250 and calls == [eval_loop.UNHOOKED_BATCHES] * 3
    calls.clear()
    batches = batches_of([1.0] * 250, [[1]] * 250)
    eval_loop.run(counting, [], hooks.RunContext("/x", ("loss",)), 40, 1)  # a tenth of the steps a call
    assert calls == [4] * 10
