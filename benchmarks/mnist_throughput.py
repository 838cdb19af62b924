"""Small models are not eaten by overhead: the MNIST CNN at batch 128, Estimator vs Keras fit.

    python benchmarks/mnist_throughput.py [--steps=100] [--steps_per_loop=10]

Both train the same network with Adam on the same synthetic in-memory batch,
each in its own process: the Estimator with the project's default CPU
kernels (oneDNN, which `common` turns on), Keras fit with TensorFlow's own
default, and Keras fit again with oneDNN as a reference. Prints the figures
and both ratios (goal >= 1.2 over Keras fit as it runs by default).
"""

import sys

import harness
import keras
import numpy as np
from absl import app, flags

from common.devices.plan import DevicePlan
from mnist import model_fn

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 100, "Measured training steps.")
flags.DEFINE_integer("steps_per_loop", 10, "Estimator steps per compiled call.")
flags.DEFINE_integer("batch_size", 128, "Training batch.")
flags.DEFINE_enum("side", None, ["estimator", "keras"], "Internal: measure one side and print its figure.")


def measure(side):
    rng = np.random.RandomState(0)
    features = rng.uniform(0, 1, (FLAGS.batch_size, 28, 28, 1)).astype(np.float32)
    labels = rng.randint(0, 10, FLAGS.batch_size).astype(np.int64)
    if side == "estimator":
        return harness.estimator_examples_per_sec(
            model_fn.model_fn, dict(num_classes=10, learning_rate=1e-3, lr_schedule="constant"),
            harness.synthetic_batch_input(features, labels), DevicePlan.single_cpu(), FLAGS.batch_size,
            FLAGS.steps, FLAGS.steps_per_loop)
    return harness.keras_fit_examples_per_sec(
        model_fn.build_cnn(10), harness.synthetic_batch_input(features, labels)(),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True), keras.optimizers.Adam(1e-3),
        FLAGS.batch_size, FLAGS.steps)


def run_side(side, onednn):
    rate, _ = harness.run_worker([
        sys.executable, __file__, f"--side={side}", f"--steps={FLAGS.steps}",
        f"--steps_per_loop={FLAGS.steps_per_loop}", f"--batch_size={FLAGS.batch_size}"], onednn)
    return rate


def main(argv):
    del argv
    if FLAGS.side:
        print(f"EXAMPLES_PER_SEC {measure(FLAGS.side)}")
        return
    # This worker loads TensorFlow before common, so the Estimator side is given oneDNN explicitly.
    ours = run_side("estimator", onednn=True)
    theirs = run_side("keras", onednn=None)
    reference = run_side("keras", onednn=True)
    print(f"mnist_throughput CNN batch {FLAGS.batch_size}: Estimator {ours:.1f} ex/s, Keras fit {theirs:.1f} ex/s, "
          f"ratio {ours / theirs:.2f} (goal >= 1.2); Keras fit with oneDNN {reference:.1f} ex/s, "
          f"ratio {ours / reference:.2f}")


if __name__ == "__main__":
    app.run(main)
