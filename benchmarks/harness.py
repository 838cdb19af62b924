"""Shared measuring helpers for the benchmark scripts (not part of the test run).

This module loads TensorFlow before `common`, so a benchmark process runs
with TensorFlow's own choice of CPU kernels (on the AVX2 machine: not
oneDNN), as a plain Keras program does. Sides that stand for the project's
defaults either run the mains (which load `common` first) or are given
oneDNN through child_env; TF_ENABLE_ONEDNN_OPTS=1 in the environment gives
an in-process benchmark the project's default.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import flags  # noqa: E402

import common  # noqa: E402
from cifar10 import generate_cifar10_tfrecords as generator  # noqa: E402
from cifar10 import resnet  # noqa: E402
from common import hooks  # noqa: E402
from common.devices import precision  # noqa: E402


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


def logged_examples_per_sec(log, after_step):
    """Examples/sec over the ExamplesPerSecondHook intervals of `log` that start at or after `after_step`.

    Each line gives its interval's rate ("current") and end step; an interval
    of n steps at rate r took n/r of the batch's time, so the whole is
    sum(n) / sum(n / r).
    """
    points = [(int(step), float(rate)) for rate, step in re.findall(
        r"Average examples/sec: \S+ \(current (\S+)\), step = (\d+)", log)]
    intervals = [(end - start, rate) for (start, _), (end, rate) in zip(points, points[1:]) if start >= after_step]
    if not intervals:
        raise ValueError(f"no examples/sec interval starts at or after step {after_step}")
    return sum(n for n, _ in intervals) / sum(n / rate for n, rate in intervals)


def keras_resnet(num_layers, dtype):
    """cifar10's ResNet as a Keras model in `dtype` (float32 logits, as cifar10.model_fn casts them)."""
    precision.set_compute_dtype(dtype)
    model = resnet.ResNetCifar10(num_layers).build()
    if dtype != "float32":
        model = keras.Model(model.inputs, keras.layers.Activation("linear", dtype="float32")(model.outputs[0]))
    return model


def keras_fit_examples_per_sec(model, dataset, loss, optimizer, batch_size, steps, warmup=5):
    """Training examples/sec of model.fit on `dataset`, the first `warmup` batches excluded."""
    model.compile(optimizer=optimizer, loss=loss)
    timer = _BatchTimer(warmup)
    model.fit(dataset, steps_per_epoch=steps + warmup, epochs=1, verbose=0, callbacks=[timer])
    return batch_size * steps / timer.seconds


# Runs argv[1:] and prints its peak resident KiB last on stderr. A small
# interpreter forks the command, because a fork of this TensorFlow-sized
# process would count this process's pages in the child's peak.
_PEAK_RSS_WRAPPER = """import resource, subprocess, sys
status = subprocess.call(sys.argv[1:])
sys.stderr.write(f"\\nPEAK_RSS_KB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
sys.exit(status)"""


def child_env(onednn=None):
    """Environment for a measured child process.

    onednn: None leaves TensorFlow's oneDNN CPU kernels to whoever loads
    TensorFlow in the child (TensorFlow's own default for a plain Keras
    process, on for the project's mains); True / False force them. This
    process's own setting (common sets it on import) is not passed down.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    env.pop("TF_ENABLE_ONEDNN_OPTS", None)
    if onednn is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = "1" if onednn else "0"
    return env


def define_cifar10_main_flags():
    """--num_layers, --batch_size and --main_flags of a benchmark that runs cifar10.main."""
    flags.DEFINE_integer("num_layers", 44, "ResNet depth.")
    flags.DEFINE_integer("batch_size", 128, "Training batch.")
    flags.DEFINE_list("main_flags", [], "Extra flags for cifar10.main.")


def run_cifar10_main(train_steps, *extra_flags):
    """Trains cifar10.main on synthetic data to `train_steps` with the flags of
    define_cifar10_main_flags in a new job dir; returns (job dir, stderr, peak
    resident MiB), or exits with the log if it fails."""
    job_dir = tempfile.mkdtemp(prefix="cifar_bench_")
    _, err, status, rss = run_measuring_memory([
        sys.executable, "-m", "cifar10.main", f"--job_dir={job_dir}", "--synthetic_data",
        f"--num_layers={flags.FLAGS.num_layers}", f"--train_steps={train_steps}",
        f"--train_batch_size={flags.FLAGS.batch_size}", "--eval_steps=1", "--save_checkpoints_steps=100000",
        *extra_flags, *flags.FLAGS.main_flags])
    if status:
        sys.exit(f"cifar10.main failed ({status}):\n{err[-3000:]}")
    return job_dir, err, rss


def run_measuring_memory(command, onednn=None):
    """Runs a command in child_env(onednn); returns (stdout, stderr, status, peak resident MiB).

    The peak is the child's ru_maxrss, the figure /usr/bin/time -v prints,
    read without needing that program on the machine.
    """
    result = subprocess.run([sys.executable, "-c", _PEAK_RSS_WRAPPER, *command], cwd=ROOT, env=child_env(onednn),
                            capture_output=True, text=True)
    peak = [line for line in result.stderr.splitlines() if line.startswith("PEAK_RSS_KB ")]
    return result.stdout, result.stderr, result.returncode, int(peak[-1].split()[1]) / 1024 if peak else None


def run_worker(command, onednn=None):
    """(examples/sec, peak MiB) of a worker that prints "EXAMPLES_PER_SEC <rate>"; exits with its log if it fails."""
    out, err, status, rss = run_measuring_memory(command, onednn)
    if status or "EXAMPLES_PER_SEC " not in out:
        sys.exit(f"{' '.join(command[1:])} failed ({status}):\n{err[-3000:]}")
    return float(out.split("EXAMPLES_PER_SEC ")[1].split()[0]), rss


def write_random_cifar_records(directory, count, seed=0):
    """DIR/train.tfrecords: `count` random images and labels in the official record format; returns its path."""
    rng = np.random.RandomState(seed)
    path = os.path.join(directory, "train.tfrecords")
    generator.write_tfrecords(path, rng.randint(0, 256, (count, 3072)).astype(np.uint8), rng.randint(0, 10, count))
    return path


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
