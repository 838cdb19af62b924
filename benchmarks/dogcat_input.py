"""The dogs-vs-cats input pipeline keeps up: decode + resize + augment alone vs the training step, same run.

    python benchmarks/dogcat_input.py [--files=600] [--train_steps=30]

Decodes, resizes to 150 and augments photo-sized JPEGs (500x375), against
the small CNN training at batch 32 on the same files. Prints images/sec of
the pipeline, the step's consumption, and the ratio (goal >= 5).
"""

import os
import tempfile

import harness
import numpy as np
import tensorflow as tf
from absl import app, flags

from common.devices.plan import DevicePlan
from dogcat import input_fn as dogcat_input
from dogcat import model_fn as dogcat_model

FLAGS = flags.FLAGS
flags.DEFINE_integer("files", 600, "Generated JPEGs.")
flags.DEFINE_integer("train_steps", 30, "Measured training steps for the consumption figure.")


def photo(rng):
    """A smooth photo-like 375x500 image (noise JPEGs decode unrealistically slowly)."""
    small = rng.randint(0, 256, (12, 16, 3)).astype(np.float32)
    return tf.cast(tf.image.resize(small[None], [375, 500], method="bicubic")[0], tf.uint8)


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as directory:
        rng = np.random.RandomState(1)
        paths = []
        for index in range(FLAGS.files):
            path = os.path.join(directory, f"{('cat', 'dog')[index % 2]}.{index}.jpg")
            tf.io.write_file(path, tf.io.encode_jpeg(photo(rng), quality=90))
            paths.append(path)
        labels = [index % 2 for index in range(len(paths))]
        data = dogcat_input.dataset(paths, labels, 150, 32, training=True, augment_images=True)
        supply = harness.pipeline_images_per_sec(data, 60, 32)
        demand = harness.estimator_examples_per_sec(
            dogcat_model.model_fn, dict(image_size=150, learning_rate=1e-4),
            dogcat_input.input_fn(paths, labels, 150, 32, training=True, augment_images=True),
            DevicePlan.single_cpu(), 32, FLAGS.train_steps, 5)
    harness.report_pipeline("dogcat (small CNN, 150px, batch 32)", supply, demand)


if __name__ == "__main__":
    app.run(main)
