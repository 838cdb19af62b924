"""CIFAR-10 input: `Cifar10DataSet` over the generated TFRecords, and synthetic data.

Images come out HWC float32 in [0, 255]; the network scales them
(x / 128 - 1), as the official example did.
"""

import os

import numpy as np
import tensorflow as tf

from common import element_seeds

HEIGHT, WIDTH, DEPTH = 32, 32, 3
SUBSETS = ("train", "validation", "eval")
GENERATE_COMMAND = "python -m cifar10.generate_cifar10_tfrecords --data_dir={}"


class CifarDataError(ValueError):
    """A CIFAR-10 file (tarball, batch or TFRecord) that cannot be used; the message names it."""


class Cifar10DataSet:
    """One subset of the TFRecords: train, validation or eval."""

    def __init__(self, data_dir, subset="train", use_distortion=True):
        if subset not in SUBSETS:
            raise ValueError(f"Invalid data subset {subset!r}; one of {', '.join(SUBSETS)}")
        self.data_dir = data_dir
        self.subset = subset
        self.use_distortion = use_distortion
        self._count = None

    def get_filenames(self):
        return [os.path.join(self.data_dir, f"{self.subset}.tfrecords")]

    def check_files(self):
        """CifarDataError when a file is missing or empty, saying how to make it."""
        for path in self.get_filenames():
            if not tf.io.gfile.exists(path) or tf.io.gfile.stat(path).length == 0:
                state = "is missing" if not tf.io.gfile.exists(path) else "is empty"
                raise CifarDataError(f"{path} {state}; make it with: {GENERATE_COMMAND.format(self.data_dir)}")

    def num_examples_per_epoch(self):
        """The number of records in the subset's files (counted once)."""
        if self._count is None:
            self.check_files()
            self._count = sum(count_records(path) for path in self.get_filenames())
        return self._count

    def parser(self, serialized_example):
        """A serialized Example -> (image HWC float32, label int32)."""
        features = tf.io.parse_single_example(serialized_example, {
            "image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
        })
        image = tf.io.decode_raw(features["image"], tf.uint8)
        image.set_shape([DEPTH * HEIGHT * WIDTH])
        image = tf.transpose(tf.reshape(image, [DEPTH, HEIGHT, WIDTH]), [1, 2, 0])
        return tf.cast(image, tf.float32), tf.cast(features["label"], tf.int32)

    @staticmethod
    def distort(image, seed):
        """Training distortion: pad to 40x40, random 32x32 crop, random left-right flip.

        Stateless ops keyed by the example's `seed` ([2] int64), so a seeded
        run crops the same way every time.
        """
        crop_seed, flip_seed = tf.unstack(tf.random.split(seed, 2))
        image = tf.image.resize_with_crop_or_pad(image, 40, 40)
        image = tf.image.stateless_random_crop(image, [HEIGHT, WIDTH, DEPTH], seed=crop_seed)
        return tf.image.stateless_random_flip_left_right(image, seed=flip_seed)

    def _parse_and_distort(self, serialized_example, seed):
        image, label = self.parser(serialized_example)
        return self.distort(image, seed), label

    def make_batch(self, batch_size, seed=None):
        """The tf.data pipeline: train repeats and shuffles; other subsets run once."""
        self.check_files()
        dataset = tf.data.TFRecordDataset(self.get_filenames(), num_parallel_reads=tf.data.AUTOTUNE)
        training = self.subset == "train"
        if training:
            buffer = int(self.num_examples_per_epoch() * 0.4) + 3 * batch_size
            dataset = dataset.shuffle(buffer, seed=seed).repeat()
        if training and self.use_distortion:
            dataset = element_seeds.with_element_seeds(dataset, seed).map(
                self._parse_and_distort, num_parallel_calls=tf.data.AUTOTUNE)
        else:
            dataset = dataset.map(self.parser, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(batch_size, drop_remainder=training).prefetch(tf.data.AUTOTUNE)


def count_records(path):
    """Records in one TFRecord file; CifarDataError naming it if it is corrupt."""
    try:
        return int(tf.data.TFRecordDataset(path).reduce(np.int64(0), lambda count, _: count + 1))
    except tf.errors.DataLossError as error:
        raise CifarDataError(f"{path}: corrupt TFRecord data ({error.message})") from error


def raise_for_corrupt_files(data_dir):
    """Reads every subset's file to the end; CifarDataError names the first corrupt one."""
    for subset in SUBSETS:
        for path in Cifar10DataSet(data_dir, subset).get_filenames():
            if tf.io.gfile.exists(path):
                count_records(path)


def synthetic_dataset(batch_size, seed=0):
    """One fixed random batch, repeated: measures the model, not the input."""
    rng = np.random.RandomState(seed)
    images = rng.uniform(0, 255, (batch_size, HEIGHT, WIDTH, DEPTH)).astype(np.float32)
    labels = rng.randint(0, 10, batch_size).astype(np.int32)
    return tf.data.Dataset.from_tensors((images, labels)).repeat()


def input_fn(data_dir, subset, batch_size, use_distortion_for_training=True, synthetic=False, seed=None):
    """An Estimator input_fn for one subset."""
    if synthetic:
        return lambda: synthetic_dataset(batch_size)
    dataset = Cifar10DataSet(data_dir, subset, subset == "train" and use_distortion_for_training)
    return lambda: dataset.make_batch(batch_size, seed)
