"""Small models are not eaten by overhead: the MNIST CNN at batch 128, Estimator vs Keras fit.

    python benchmarks/mnist_throughput.py [--steps=100] [--steps_per_loop=10]

Both train the same network with Adam on the same synthetic in-memory batch,
in this process, one after the other. Prints both and the ratio (goal >= 1.2).
"""

import harness
import keras
import numpy as np
from absl import app, flags

from common import towers
from mnist import model_fn

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 100, "Measured training steps.")
flags.DEFINE_integer("steps_per_loop", 10, "Estimator steps per compiled call.")
flags.DEFINE_integer("batch_size", 128, "Training batch.")


def main(argv):
    del argv
    rng = np.random.RandomState(0)
    features = rng.uniform(0, 1, (FLAGS.batch_size, 28, 28, 1)).astype(np.float32)
    labels = rng.randint(0, 10, FLAGS.batch_size).astype(np.int64)
    ours = harness.estimator_examples_per_sec(
        model_fn.model_fn, dict(num_classes=10, learning_rate=1e-3, lr_schedule="constant"),
        harness.synthetic_batch_input(features, labels), towers.DevicePlan.single_cpu(), FLAGS.batch_size,
        FLAGS.steps, FLAGS.steps_per_loop)
    theirs = harness.keras_fit_examples_per_sec(
        model_fn.build_cnn(10), harness.synthetic_batch_input(features, labels)(),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True), keras.optimizers.Adam(1e-3),
        FLAGS.batch_size, FLAGS.steps)
    print(f"mnist_throughput CNN batch {FLAGS.batch_size}: Estimator {ours:.1f} ex/s, Keras fit {theirs:.1f} ex/s, "
          f"ratio {ours / theirs:.2f} (goal >= 1.2)")


if __name__ == "__main__":
    app.run(main)
