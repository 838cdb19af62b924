"""ResNet-44 evaluation and prediction throughput: common.Estimator vs Keras 3, same run.

    python benchmarks/cifar10_eval_throughput.py [--steps=50] [--warmup=10] [--num_layers=44]
        [--eval_batch_size=100] [--dtype=float32] [any of cifar10.main's device flags]

Takes cifar10.main's flags (towers, variable strategy, XLA, dtype, data
format) for its own side. Each side runs in its own process on one
synthetic batch repeated: ours evaluates (accuracy and loss) and predicts
(a batch at a time, yield_single_examples=False) cifar10.model_fn's network
through common.Estimator, from a checkpoint of one training step; Keras 3
evaluates and predicts the same network, compiled with its defaults (XLA on
a GPU). Both leave their first `warmup` batches out (tracing, autotuning).
Keras also runs with oneDNN, as in cifar10_throughput. Prints examples/sec
of each side and ours over Keras, for evaluate and for predict.
"""

import itertools
import sys
import tempfile
import time

import harness
import keras
import numpy as np
from absl import app, flags

import common
from cifar10 import main as cifar_main  # defines cifar10.main's flags, which the ours side runs with
from cifar10 import model_fn
from common import hooks
from common.jobs import cli

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 50, "Measured batches of evaluate and of predict.", lower_bound=1)
flags.DEFINE_integer("warmup", 10, "Batches left out at the start of each (a multiple of --steps_per_loop).",
                     lower_bound=1)
flags.DEFINE_enum("worker", None, ["ours", "keras"], "Internal: run one side and print its figures.")

PHASES = ("evaluate", "predict")


class _Stopwatch(hooks.Hook):
    """Examples/sec from the end of batch `warmup` to the last batch."""

    def __init__(self, warmup, batch_size):
        self._warmup, self._batch_size = warmup, batch_size
        self._start = self._last = None

    def batch_ended(self, batch):
        now = time.perf_counter()
        if self._start is None and batch >= self._warmup:
            self._start = batch, now
        self._last = batch, now

    def after_step(self, step, values, context):
        self.batch_ended(step)

    @property
    def examples_per_sec(self):
        if self._start is None or self._last[0] == self._start[0]:
            raise ValueError(f"fewer than {self._warmup} + 1 batches ran")
        return self._batch_size * (self._last[0] - self._start[0]) / (self._last[1] - self._start[1])


class _KerasStopwatch(keras.callbacks.Callback):
    def __init__(self, stopwatch):
        super().__init__()
        self.stopwatch = stopwatch

    def on_test_batch_end(self, batch, logs=None):
        self.stopwatch.batch_ended(batch + 1)

    def on_predict_batch_end(self, batch, logs=None):
        self.stopwatch.batch_ended(batch + 1)


def _synthetic_batch():
    rng = np.random.RandomState(0)
    size = FLAGS.eval_batch_size
    return rng.uniform(0, 255, (size, 32, 32, 3)).astype(np.float32), rng.randint(0, 10, size).astype(np.int32)


def ours_side():
    plan, cluster = cli.setup_devices()
    cli.check_batch_sizes(plan, eval_batch_size=FLAGS.eval_batch_size)
    config = cli.run_config(plan, cluster, tempfile.mkdtemp(prefix="cifar_eval_bench_"),
                            save_checkpoints_steps=10**9)
    estimator = common.Estimator(model_fn.model_fn, config=config, params=cifar_main.model_params(390))
    input_fn = harness.synthetic_batch_input(*_synthetic_batch())
    estimator.train(input_fn, steps=1)
    evaluate, predict = (_Stopwatch(FLAGS.warmup, FLAGS.eval_batch_size) for _ in PHASES)
    estimator.evaluate(input_fn, steps=FLAGS.warmup + FLAGS.steps, hooks=[evaluate])
    batches = estimator.predict(input_fn, hooks=[predict], yield_single_examples=False)
    for _ in itertools.islice(batches, FLAGS.warmup + FLAGS.steps):
        pass
    return evaluate.examples_per_sec, predict.examples_per_sec


def keras_side():
    model = harness.keras_resnet(FLAGS.num_layers, FLAGS.dtype)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    dataset = harness.synthetic_batch_input(*_synthetic_batch())()
    evaluate, predict = (_Stopwatch(FLAGS.warmup, FLAGS.eval_batch_size) for _ in PHASES)
    model.evaluate(dataset, steps=FLAGS.warmup + FLAGS.steps, verbose=0, callbacks=[_KerasStopwatch(evaluate)])
    model.predict(dataset.map(lambda images, labels: images), steps=FLAGS.warmup + FLAGS.steps, verbose=0,
                  callbacks=[_KerasStopwatch(predict)])
    return evaluate.examples_per_sec, predict.examples_per_sec


def run_side(side, onednn=None):
    """{phase: examples/sec} of one side in its own process."""
    out, err, status, _ = harness.run_measuring_memory(
        [sys.executable, __file__, f"--worker={side}", *sys.argv[1:]], onednn)
    rates = dict(line.split()[1:] for line in out.splitlines() if line.startswith("RATE "))
    if status or set(rates) != set(PHASES):
        sys.exit(f"the {side} side failed ({status}):\n{err[-3000:]}")
    return {phase: float(rates[phase]) for phase in PHASES}


def main(argv):
    del argv
    if FLAGS.worker:
        for phase, rate in zip(PHASES, ours_side() if FLAGS.worker == "ours" else keras_side()):
            print(f"RATE {phase} {rate}", flush=True)
        return
    rates = {"ours": run_side("ours", onednn=True), "keras": run_side("keras"),
             "keras_onednn": run_side("keras", onednn=True)}
    name = " ".join([f"ResNet-{FLAGS.num_layers} batch {FLAGS.eval_batch_size} {FLAGS.dtype}", *sys.argv[1:]])
    for phase in PHASES:
        ours, plain, onednn = (rates[side][phase] for side in ("ours", "keras", "keras_onednn"))
        print(f"cifar10_{phase}_throughput {name}: common.Estimator {ours:.1f} ex/s, Keras {plain:.1f} ex/s, "
              f"ratio {ours / plain:.2f}; Keras with oneDNN {onednn:.1f} ex/s, ratio {ours / onednn:.2f}", flush=True)


if __name__ == "__main__":
    app.run(main)
