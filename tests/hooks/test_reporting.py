"""LoggingTensor, ExamplesPerSecond and Progress hooks: what they log, when, with an injected clock."""

import logging as py_logging

import numpy as np
import pytest
import tensorflow as tf

from common import hooks
from common.state import summaries
from tests.hooks import FakeClock, context


def test_examples_per_second_figures_for_a_known_step_time(caplog):
    clock = FakeClock()
    hook = hooks.ExamplesPerSecondHook(batch_size=128, every_n_steps=10, clock=clock)
    ctx = context()
    hook.begin(ctx)
    assert hook.steps_to_trigger(0) == 1
    hook.after_step(1, {}, ctx)  # first boundary: only sets the baseline
    assert hook.average_examples_per_sec is None
    assert hook.steps_to_trigger(1) == 9
    clock.now += 9 * 0.5  # 9 steps at 0.5 s
    with caplog.at_level(py_logging.INFO):
        hook.after_step(10, {}, ctx)
    assert hook.current_examples_per_sec == pytest.approx(256.0)
    assert hook.average_examples_per_sec == pytest.approx(256.0)
    clock.now += 10 * 0.25  # 10 steps at 0.25 s
    hook.after_step(15, {}, ctx)  # not a multiple of 10: no trigger
    assert hook.current_examples_per_sec == pytest.approx(256.0)
    hook.after_step(20, {}, ctx)
    assert hook.current_examples_per_sec == pytest.approx(512.0)
    assert hook.average_examples_per_sec == pytest.approx(128 * 19 / 7.0)
    assert "Average examples/sec: 256 (current 256), step = 10" in caplog.text


def test_logging_hook_logs_named_values_at_tf1s_steps(caplog):
    """TF 2.15's LoggingTensorHook(every_n_iter=3) logged the runs of global steps 1, 4, 7, 10 of a run
    from step 0, showing the step each started from as "step"; a run resumed at 5 logs 6, 9, ..."""
    clock = FakeClock()
    hook = hooks.LoggingTensorHook({"lr": "learning_rate", "loss": "loss", "step": "global_step"}, every_n_iter=3,
                                   clock=clock)
    ctx = context()
    hook.begin(ctx)
    assert set(hook.before_step(0)) == {"learning_rate", "loss", "global_step"}
    fired = []
    with caplog.at_level(py_logging.INFO):
        for step in range(1, 11):
            assert hook.steps_to_trigger(step - 1) == (1 if step == 1 else 3 - (step - 2) % 3)
            clock.now += 1
            hook.after_step(step, {"learning_rate": np.float32(0.1), "loss": np.float32(1 / step),
                                   "global_step": step}, ctx)
            fired += [step] if "step = %d" % (step - 1) in caplog.text else []
    assert fired == [1, 4, 7, 10]
    assert "lr = 0.1, loss = 1.0, step = 0\n" in caplog.text
    assert "lr = 0.1, loss = 0.25, step = 3 (3.000 sec)" in caplog.text
    resumed = hooks.LoggingTensorHook(["loss"], every_n_iter=3, clock=clock)
    resumed.begin(context(start_step=5))
    assert resumed.steps_to_trigger(5) == 1
    resumed.after_step(6, {"loss": np.float32(1.0)}, ctx)
    assert [resumed.steps_to_trigger(s) for s in (6, 7, 8)] == [3, 2, 1]
    resumed.begin(context(start_step=7))  # the same hook handed to another train() call: TF1's begin() reset it
    assert resumed.steps_to_trigger(7) == 1


def test_logging_hook_asks_only_for_a_call_ending_on_a_step_it_logs_and_formats_and_logs_at_end(caplog):
    ctx = context()
    hook = hooks.LoggingTensorHook({"p": "probabilities"}, every_n_iter=4, at_end=False,
                                   formatter=lambda values: f"p is {values['p'].tolist()}")
    ctx = hooks.RunContext("/x", ("loss",), graph_tensors=("probabilities",))
    hook.begin(ctx)
    asked = []
    with caplog.at_level(py_logging.INFO):
        for step, coming in ((0, 1), (1, 2), (3, 2), (5, 3), (8, 1)):
            ctx.steps_coming = coming
            asked.append(bool(hook.before_step(step)))
            hook.after_step(step + coming, {"probabilities": np.array([step + coming, 0.5])} if asked[-1] else {},
                            ctx)
    assert asked == [True, False, True, False, True]  # the calls ending on steps 1, 5 and 9
    assert caplog.messages == ["p is [1.0, 0.5]", "p is [5.0, 0.5]", "p is [9.0, 0.5]"]
    at_end = hooks.LoggingTensorHook(["loss"], at_end=True)
    at_end.begin(ctx)
    with caplog.at_level(py_logging.INFO):
        at_end.after_step(7, {"loss": np.float32(0.25)}, ctx)
        at_end.end(7, ctx)
    assert caplog.messages[-1] == "loss = 0.25"
    with pytest.raises(ValueError, match="give at_end=True and/or one of every_n_iter and every_n_secs"):
        hooks.LoggingTensorHook(["loss"])
    with pytest.raises(ValueError, match="LoggingTensorHook asks for accuracy, which the step does not offer"):
        hooks.LoggingTensorHook(["accuracy"], every_n_iter=1).begin(ctx)


def test_progress_hook_says_how_far_how_fast_and_how_long_is_left(caplog):
    clock = FakeClock()
    hook = hooks.ProgressHook(num_steps=1000, batch_size=32, every_n_steps=100, clock=clock)
    ctx = context(start_step=200)
    hook.begin(ctx)
    assert hook.last_step == 1200 and hook.steps_to_trigger(200) == 1
    with caplog.at_level(py_logging.INFO):
        hook.after_step(201, {}, ctx)  # the first boundary starts the clock (tracing is not timed)
        assert hook.steps_to_trigger(201) == 100
        clock.now += 50.0  # 100 steps in 50 s: 2 steps/sec
        hook.after_step(301, {}, ctx)
    assert caplog.messages == ["Progress: step 301 of 1200 (10.1%), 2 steps/sec, 64 examples/sec, "
                               "about 0:07:30 left"]  # 899 steps at 2 a second
    with pytest.raises(ValueError, match="give exactly one of num_steps and last_step"):
        hooks.ProgressHook()


def test_step_counter_hook_writes_global_step_per_sec_where_tf1s_arguments_say(tmp_path, caplog):
    clock = FakeClock()
    other = tmp_path / "counter"
    hook = hooks.StepCounterHook(every_n_steps=10, output_dir=str(other), clock=clock)
    ctx = context()
    hook.begin(ctx)
    hook.after_step(1, {}, ctx)  # the first boundary starts the clock
    clock.now += 2.0
    with caplog.at_level(py_logging.INFO):
        hook.after_step(11, {}, ctx)
    hook.end(11, ctx)
    assert "global_step/sec: 5" in caplog.text
    assert summaries.read_scalars(str(other)) == {"global_step/sec": [(11, 5.0)]}
    mine = tf.summary.create_file_writer(str(tmp_path / "mine"))
    given = hooks.StepCounterHook(every_n_steps=10, summary_writer=mine, clock=clock)
    given.begin(ctx)
    given.after_step(1, {}, ctx)
    clock.now += 4.0
    given.after_step(11, {}, ctx)
    given.end(11, ctx)
    mine.flush()
    assert summaries.read_scalars(str(tmp_path / "mine")) == {"global_step/sec": [(11, 2.5)]}
