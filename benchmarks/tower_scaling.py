"""Multi-tower costs nothing: 1 tower vs 2 towers on 2 logical CPUs, same global batch, same run.

    python benchmarks/tower_scaling.py [--steps=30] [--num_layers=20]

Prints examples/sec of a CIFAR-size ResNet (batch 128) and of the MNIST CNN
(batch 128) for 1 and 2 towers, and the ratio (target >= 0.95).
"""

import harness  # noqa: F401  (puts the project on sys.path)
import numpy as np
from absl import app, flags

from cifar10 import model_fn as cifar_model
from common.devices import runtime
from common.devices.plan import CPU, DevicePlan
from mnist import model_fn as mnist_model

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 30, "Measured steps per configuration.")
flags.DEFINE_integer("num_layers", 20, "ResNet depth.")
flags.DEFINE_integer("batch_size", 128, "Global batch.")


def measure(name, model_fn, params, features, labels):
    rates = []
    for num_towers in (1, 2):
        plan = DevicePlan(tuple(f"/cpu:{i}" for i in range(num_towers)), CPU)
        rates.append(harness.estimator_examples_per_sec(
            model_fn, params, harness.synthetic_batch_input(features, labels), plan, FLAGS.batch_size, FLAGS.steps))
    print(f"tower_scaling {name} batch {FLAGS.batch_size}: 1 tower {rates[0]:.1f} ex/s, 2 towers {rates[1]:.1f} ex/s, "
          f"ratio {rates[1] / rates[0]:.3f} (target >= 0.95)", flush=True)


def main(argv):
    del argv
    runtime.configure(cpu_towers=2)
    rng = np.random.RandomState(0)
    batch = FLAGS.batch_size
    cifar_params = dict(num_layers=FLAGS.num_layers, data_format="channels_last", batch_norm_decay=0.997,
                        batch_norm_epsilon=1e-5, weight_decay=2e-4, optimizer="momentum", momentum=0.9,
                        learning_rate=0.1, lr_schedule="piecewise", batches_per_epoch=390, decay_steps=1,
                        decay_rate=1.0)
    measure(f"resnet{FLAGS.num_layers}", cifar_model.model_fn, cifar_params,
            rng.uniform(0, 255, (batch, 32, 32, 3)).astype(np.float32), rng.randint(0, 10, batch).astype(np.int32))
    mnist_params = dict(num_classes=10, learning_rate=1e-3, lr_schedule="constant")
    measure("mnist_cnn", mnist_model.model_fn, mnist_params,
            rng.uniform(0, 1, (batch, 28, 28, 1)).astype(np.float32), rng.randint(0, 10, batch).astype(np.int64))


if __name__ == "__main__":
    app.run(main)
