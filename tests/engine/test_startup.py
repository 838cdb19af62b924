"""Start-up split by phase: the laps a clock charges, the first call's split logged once, and what train() and
evaluate() log; model_fn traced as tf.estimator called it (no AutoGraph)."""

import logging as py_logging
import re

import pytest
import tensorflow as tf

import common
from common.engine import startup
from common.engine.loops import LoopResult
from common.tf1 import layers as tf1_layers
from common.tf1 import metrics as tf1_metrics
from common.tf1 import train as tf1_train
from tests import models
from tests.hooks import FakeClock


def test_laps_charge_the_time_since_the_last_lap_and_the_report_is_logged_once(caplog):
    clock = FakeClock()
    timer = startup.StartupClock("train()", clock=clock)
    clock.now += 0.5
    timer.lap("input_fn")
    clock.now += 2.0
    timer.lap("tracing model_fn")
    clock.now += 1.25
    timer.lap("input_fn")  # a phase charged twice adds up
    clock.now += 4.0
    with caplog.at_level(py_logging.INFO, logger="tensorflow"):  # (another test may have left it at WARNING)
        timer.report("compiling")
        clock.now += 9.0
        timer.report("compiling")
    assert timer.phases == {"input_fn": 1.75, "tracing model_fn": 2.0, "compiling": 4.0}
    assert timer.total == pytest.approx(7.75)
    assert caplog.text.count("Start-up of train()") == 1
    assert ("Start-up of train(): 7.75 s to the end of the first compiled call (input_fn 1.75 s, tracing model_fn "
            "2.00 s, compiling 4.00 s).") in caplog.text


def test_the_first_call_is_split_into_what_came_before_the_trace_and_the_compiled_call():
    clock = FakeClock()
    timer = startup.StartupClock("evaluate()", clock=clock)
    traces, calls = [], []

    def trace():
        clock.now += 3.0
        traces.append(1)

    def run(count):
        clock.now += 0.5 * count
        calls.append(count)
        return LoopResult(count, False, {})

    clock.now += 1.0
    timed = startup.timing_first_call(run, timer, trace, ("batch", "batches"))
    assert timed(2).steps == 2 and timed(4).steps == 4
    assert traces == [1] and calls == [2, 4]
    assert timer.phases == {"restoring and starting hooks": 1.0, "tracing the loop": 3.0,
                            "compiling and running 2 batches": 1.0}


def test_a_first_call_with_no_loop_to_trace_ahead_has_no_tracing_phase():
    clock = FakeClock()
    timer = startup.StartupClock("train()", clock=clock)

    def run(count):
        clock.now += 0.25
        return LoopResult(1, False, {})

    clock.now += 1.0
    timed = startup.timing_first_call(run, timer, None, ("step", "steps"))
    assert timed(5).steps == 1
    assert timer.phases == {"restoring and starting hooks": 1.0, "compiling and running 1 step": 0.25}


def _start_up_lines(text):
    return re.findall(r"Start-up of (\w+\(\)): ([\d.]+) s .*\((.*)\)\.", text)


def test_train_and_evaluate_log_their_start_up_once_per_call(tmp_path, caplog):
    features, labels = models.blobs(32)
    est = common.Estimator(models.classifier_fn, str(tmp_path / "model"), params={"hidden": 4})
    with caplog.at_level(py_logging.INFO, logger="tensorflow"):
        est.train(models.train_input(features, labels, 8), steps=3)
        est.evaluate(models.eval_input(features, labels, 8))
    lines = _start_up_lines(caplog.text)
    assert [call for call, _, _ in lines] == ["train()", "evaluate()"]
    for call, total, split in lines:
        phases = dict(part.rsplit(" ", 2)[:2] for part in split.split(", "))
        # the first call runs the step alone while the loop compiles on a thread (common.engine.first_steps)
        first_call = "compiling and running 1 step" if call == "train()" else "compiling and running 1 batch"
        assert list(phases) == ["input_fn", "tracing model_fn", "restoring and starting hooks", first_call]
        assert sum(float(s) for s in phases.values()) == pytest.approx(float(total), abs=0.03)


def test_model_fn_is_not_transformed_by_autograph_as_tf_estimator_did_not(tmp_path):
    """tf.estimator built model_fn's graph in TF1 graph mode: a Python `if` on a tensor raised there."""
    def model_fn(features, labels, mode):
        if tf.reduce_sum(features) > 0:
            features = features * 2.0
        return models.classifier_fn(features, labels, mode, {"hidden": 4})

    features, labels = models.blobs(16)
    est = common.Estimator(model_fn, str(tmp_path / "model"))
    with pytest.raises(TypeError, match="tf.Tensor.*as a Python `bool`"):
        est.train(models.train_input(features, labels, 8), steps=1)



def _counting(model_fn):
    """model_fn counting its calls per mode (each call is one trace of it)."""
    calls = {}

    def counted(features, labels, mode, params):
        calls[mode] = calls.get(mode, 0) + 1
        return model_fn(features, labels, mode, params)

    return counted, calls


def _tf1_model_fn(features, labels, mode, params):
    """TF1 variables, optimizer and metrics: variables a tf.function's first trace would lift (and trace again)."""
    logits = tf1_layers.dense(features, 3, name="logits")
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, tf1_train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                eval_metric_ops={"accuracy": tf1_metrics.accuracy(labels, tf.argmax(logits, 1))})


@pytest.mark.parametrize("model_fn", [_tf1_model_fn, models.classifier_fn], ids=["tf1", "keras"])
@pytest.mark.parametrize("num_towers", [1, 2])
def test_model_fn_is_traced_once_per_tower_and_mode(tmp_path, model_fn, num_towers):
    """As tf.estimator built one graph per mode: the probe of each mode is the step its loop calls, traced once
    (on one tower, the train step's call building the model and the optimizer's state; on several, TRAIN's
    probe builds them first, on one tower); a second call of each traces nothing."""
    features, labels = models.blobs(32)
    counted, calls = _counting(model_fn)
    config = common.RunConfig(device_plan=models.plan(num_towers))
    est = common.Estimator(counted, str(tmp_path / "model"), params={"hidden": 4}, config=config)
    for _ in range(2):
        est.train(models.train_input(features, labels, 8), steps=2)
        est.evaluate(models.eval_input(features, labels, 8))
        assert len(list(est.predict(models.eval_input(features, labels, 8)))) == 32
    assert calls == {common.ModeKeys.TRAIN: 1 if num_towers == 1 else 1 + num_towers, common.ModeKeys.EVAL: num_towers,
                     common.ModeKeys.PREDICT: num_towers + 1}  # (+1: the .meta's inference graph, once)
