"""The CIFAR-10 input pipeline is never the bottleneck: pipeline alone vs the training step, same run.

    python benchmarks/cifar10_input.py [--records=10000] [--train_steps=10]

Cifar10DataSet("train", distortion on) over TFRecords of random images,
against ResNet-44 training at batch 128 on those TFRecords. Prints
images/sec of the pipeline, the step's consumption, and the ratio (goal >= 5).
"""

import tempfile

import harness
from absl import app, flags

from cifar10 import input_fn as cifar_input
from cifar10 import model_fn as cifar_model
from common.devices.plan import DevicePlan

FLAGS = flags.FLAGS
flags.DEFINE_integer("records", 10000, "Random CIFAR records to write.")
flags.DEFINE_integer("train_steps", 10, "Measured training steps for the consumption figure.")


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as directory:
        harness.write_random_cifar_records(directory, FLAGS.records)
        dataset = cifar_input.Cifar10DataSet(directory, "train", use_distortion=True)
        supply = harness.pipeline_images_per_sec(dataset.make_batch(128), 60, 128)
        params = dict(num_layers=44, data_format="channels_last", batch_norm_decay=0.997, batch_norm_epsilon=1e-5,
                      weight_decay=2e-4, optimizer="momentum", momentum=0.9, learning_rate=0.1,
                      lr_schedule="piecewise", batches_per_epoch=390, decay_steps=1, decay_rate=1.0)
        demand = harness.estimator_examples_per_sec(cifar_model.model_fn, params, lambda: dataset.make_batch(128),
                                                    DevicePlan.single_cpu(), 128, FLAGS.train_steps, 5)
    harness.report_pipeline("cifar10 (ResNet-44, batch 128)", supply, demand)


if __name__ == "__main__":
    app.run(main)
