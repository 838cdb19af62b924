"""TPUEstimator's rate hook: both rates logged and written, every N steps."""

import tensorflow as tf

from common.hooks.protocol import RunContext
from common.state import summaries
from common.tpu.hooks import ExamplesPerSecondHook


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_examples_per_second_are_the_step_rate_times_the_batch_and_both_are_written(tmp_path, caplog):
    writer = tf.summary.create_file_writer(str(tmp_path))
    context = RunContext(str(tmp_path), ("loss",), summary_writer=writer)
    clock = _Clock()
    hook = ExamplesPerSecondHook(batch_size=8, every_n_steps=3, clock=clock)
    hook.begin(context)
    with caplog.at_level("INFO", logger="tensorflow"):
        for step in range(1, 8):
            hook.after_step(step, {}, context)
            clock.now += 0.5  # two steps a second
    hook.end(7, context)
    writer.flush()
    written = summaries.read_scalars(str(tmp_path))
    steps = [step for step, _ in written["global_step/sec"]]
    assert steps == [step for step, _ in written["examples/sec"]] and len(steps) == 2
    assert [value for _, value in written["examples/sec"]] == [8 * value for _, value in written["global_step/sec"]]
    assert [r.getMessage() for r in caplog.records][:2] == ["global_step/sec: 2", "examples/sec: 16"]
