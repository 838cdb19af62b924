"""The input pipeline is never the bottleneck: pipeline alone vs the training step, same run.

    python benchmarks/input_pipeline.py [--cifar_records=10000] [--dogcat_files=600]

CIFAR: Cifar10DataSet("train", distortion on) over TFRecords of random
images, against ResNet-44 training at batch 128. Dogs vs. cats: decoding,
resizing to 150 and augmenting photo-sized JPEGs (500x375), against the
small CNN at batch 32. Prints images/sec of each pipeline, the step's
consumption, and the ratio (goal >= 5).
"""

import os
import tempfile
import time

import harness
import numpy as np
import tensorflow as tf
from absl import app, flags

from cifar10 import generate_cifar10_tfrecords as generator
from cifar10 import input_fn as cifar_input
from cifar10 import model_fn as cifar_model
from common import towers
from dogcat import input_fn as dogcat_input
from dogcat import model_fn as dogcat_model

FLAGS = flags.FLAGS
flags.DEFINE_integer("cifar_records", 10000, "Random CIFAR records to write.")
flags.DEFINE_integer("dogcat_files", 600, "Generated JPEGs.")
flags.DEFINE_integer("train_steps", 10, "Measured training steps for the consumption figure.")


def pipeline_images_per_sec(dataset, batches, batch_size):
    iterator = iter(dataset)
    for _ in range(3):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * batch_size / (time.perf_counter() - start)


def report(name, supply, demand):
    print(f"input_pipeline {name}: pipeline {supply:.0f} images/s, training step consumes {demand:.1f} images/s, "
          f"ratio {supply / demand:.1f} (goal >= 5)", flush=True)


def cifar(directory):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, (FLAGS.cifar_records, 3072)).astype(np.uint8)
    generator.write_tfrecords(os.path.join(directory, "train.tfrecords"), images, rng.randint(0, 10, len(images)))
    dataset = cifar_input.Cifar10DataSet(directory, "train", use_distortion=True)
    supply = pipeline_images_per_sec(dataset.make_batch(128), 60, 128)
    params = dict(num_layers=44, data_format="channels_last", batch_norm_decay=0.997, batch_norm_epsilon=1e-5,
                  weight_decay=2e-4, optimizer="momentum", momentum=0.9, learning_rate=0.1, lr_schedule="piecewise",
                  batches_per_epoch=390, decay_steps=1, decay_rate=1.0)
    demand = harness.estimator_examples_per_sec(cifar_model.model_fn, params, lambda: dataset.make_batch(128),
                                                towers.DevicePlan.single_cpu(), 128, FLAGS.train_steps, 5)
    report("cifar10 (ResNet-44, batch 128)", supply, demand)


def photo(rng):
    """A smooth photo-like 375x500 image (noise JPEGs decode unrealistically slowly)."""
    small = rng.randint(0, 256, (12, 16, 3)).astype(np.float32)
    return tf.cast(tf.image.resize(small[None], [375, 500], method="bicubic")[0], tf.uint8)


def dogcat(directory):
    rng = np.random.RandomState(1)
    paths = []
    for index in range(FLAGS.dogcat_files):
        path = os.path.join(directory, f"{('cat', 'dog')[index % 2]}.{index}.jpg")
        tf.io.write_file(path, tf.io.encode_jpeg(photo(rng), quality=90))
        paths.append(path)
    labels = [index % 2 for index in range(len(paths))]
    data = dogcat_input.dataset(paths, labels, 150, 32, training=True, augment_images=True)
    supply = pipeline_images_per_sec(data, 60, 32)
    demand = harness.estimator_examples_per_sec(
        dogcat_model.model_fn, dict(image_size=150, learning_rate=1e-4),
        dogcat_input.input_fn(paths, labels, 150, 32, training=True, augment_images=True),
        towers.DevicePlan.single_cpu(), 32, FLAGS.train_steps * 3, 5)
    report("dogcat (small CNN, 150px, batch 32)", supply, demand)


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as directory:
        cifar(directory)
    with tempfile.TemporaryDirectory() as directory:
        dogcat(directory)


if __name__ == "__main__":
    app.run(main)
