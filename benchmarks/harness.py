"""Shared measuring helpers for the benchmark scripts (not part of the test run)."""

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import common  # noqa: E402
from common import hooks  # noqa: E402


def estimator_examples_per_sec(model_fn, params, input_fn, plan, batch_size, steps, steps_per_loop=10,
                               model_dir=None):
    """Training examples/sec through common.Estimator, the first (tracing) loop excluded."""
    config = common.RunConfig(model_dir=model_dir, save_checkpoints_steps=10**9, save_summary_steps=0,
                              log_step_count_steps=0, steps_per_loop=steps_per_loop, device_plan=plan,
                              tf_random_seed=1)
    meter = hooks.ExamplesPerSecondHook(batch_size, every_n_steps=steps)
    common.Estimator(model_fn, config=config, params=params).train(input_fn, steps=steps + 1, hooks=[meter])
    return meter.average_examples_per_sec


class _BatchTimer(keras.callbacks.Callback):
    def __init__(self, warmup):
        super().__init__()
        self.warmup, self.start, self.batches = warmup, None, 0

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1
        if self.batches == self.warmup:
            self.start = time.perf_counter()

    def on_train_end(self, logs=None):
        self.seconds = time.perf_counter() - self.start


def keras_fit_examples_per_sec(model, dataset, loss, optimizer, batch_size, steps, warmup=5):
    """Training examples/sec of model.fit on `dataset`, the first `warmup` batches excluded."""
    model.compile(optimizer=optimizer, loss=loss)
    timer = _BatchTimer(warmup)
    model.fit(dataset, steps_per_epoch=steps + warmup, epochs=1, verbose=0, callbacks=[timer])
    return batch_size * steps / timer.seconds


def run_measuring_memory(command):
    """Runs a command under /usr/bin/time; returns (stdout, stderr, status, peak resident MiB)."""
    result = subprocess.run(["/usr/bin/time", "-f", "PEAK_RSS_KB %M", *command], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True)
    peak = [line for line in result.stderr.splitlines() if line.startswith("PEAK_RSS_KB ")]
    return result.stdout, result.stderr, result.returncode, int(peak[-1].split()[1]) / 1024 if peak else None


def pipeline_images_per_sec(dataset, batches, batch_size):
    """Images/sec of a batched tf.data pipeline alone, its first 3 batches excluded."""
    iterator = iter(dataset)
    for _ in range(3):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * batch_size / (time.perf_counter() - start)


def report_pipeline(name, supply, demand):
    print(f"input_pipeline {name}: pipeline {supply:.0f} images/s, training step consumes {demand:.1f} images/s, "
          f"ratio {supply / demand:.1f} (goal >= 5)", flush=True)


def synthetic_batch_input(features, labels):
    """One fixed batch repeated: measures the model, not the input."""
    return lambda: tf.data.Dataset.from_tensors((features, labels)).repeat()
