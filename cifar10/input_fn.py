"""CIFAR-10 input: `Cifar10DataSet` over the generated TFRecords, and synthetic data.

Images come out HWC float32 in [0, 255]; the network scales them
(x / 128 - 1), as the official example did.
"""

import hashlib
import json
import os

import numpy as np
import tensorflow as tf

from common.jobs import element_seeds

HEIGHT, WIDTH, DEPTH = 32, 32, 3
NUM_CLASSES = 10
SUBSETS = ("train", "validation", "eval")
MANIFEST = "manifest.json"  # {file name: {records, sha256}}, written by generate_cifar10_tfrecords
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
        """The number of records in the subset's files, every record checked
        (once: see check_records), so a bad record is named before training."""
        if self._count is None:
            self.check_files()
            self._count = sum(check_records(path) for path in self.get_filenames())
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


_CHECK_BATCH = 4096
_RECORD_FEATURES = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}


def _whole_records(path, start):
    """How many records of `path` read whole, counting on from record `start` one by one."""
    count = start
    try:
        for _ in tf.data.TFRecordDataset(path).skip(start):
            count += 1
    except tf.errors.DataLossError:
        pass
    return count


def _check_batch(path, first, serialized):
    """CifarDataError naming the first record of the batch that is not an
    Example with a 3072-byte image and a label in 0..9."""
    try:
        parsed = tf.io.parse_example(serialized, _RECORD_FEATURES)
    except tf.errors.InvalidArgumentError:
        for offset, record in enumerate(serialized):
            try:
                tf.io.parse_example(record[None], _RECORD_FEATURES)
            except tf.errors.InvalidArgumentError as error:
                raise CifarDataError(f"{path}: record {first + offset} is not a CIFAR-10 Example with an image "
                                     f"and a label ({error.message.splitlines()[0]})") from error
        raise
    sizes = tf.strings.length(parsed["image"]).numpy()
    labels = parsed["label"].numpy()
    bad = np.flatnonzero((sizes != HEIGHT * WIDTH * DEPTH) | (labels < 0) | (labels >= NUM_CLASSES))
    if len(bad):
        index = int(bad[0])
        raise CifarDataError(f"{path}: record {first + index} has a {sizes[index]}-byte image and label "
                             f"{labels[index]} (expected {HEIGHT * WIDTH * DEPTH} bytes and a label in 0..9)")


_CHECKED = {}  # (path and its manifest's sizes and mtimes) -> records, of the files check_records passed


def check_records(path):
    """Parses every record of one TFRecord file and returns how many it holds.

    CifarDataError names the file and the record when one is not an Example,
    holds an image that is not 32x32x3 bytes or a label outside 0..9, or the
    file is cut inside a record (with how many whole records it holds), and
    when the count differs from the manifest the generator wrote beside it.
    A local file checked before in this process, and unchanged since (its and
    the manifest's inode, size and modification time in nanoseconds), is not
    read again.
    """
    if "://" in path:
        return scan_records(path)
    key = (os.path.realpath(path), _file_state(path))
    if key not in _CHECKED:
        _CHECKED[key] = scan_records(path)
    return _CHECKED[key]


def _file_state(path):
    """(inode, size, modification time) of the file and of its manifest, where it has one."""
    manifest = os.path.join(os.path.dirname(path), MANIFEST)
    paths = [path] + ([manifest] if os.path.exists(manifest) else [])
    return tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in map(os.stat, paths))


def scan_records(path):
    """check_records's scan itself, every time (what benchmarks/cifar10_preflight.py times)."""
    count, framed = 0, 0  # framed: the bytes those records take, with TFRecord's 16 bytes of framing each
    try:
        for serialized in tf.data.TFRecordDataset(path).batch(_CHECK_BATCH):
            _check_batch(path, count, serialized)
            count += int(serialized.shape[0])
            framed += int(tf.reduce_sum(tf.strings.length(serialized))) + 16 * int(serialized.shape[0])
        size = tf.io.gfile.stat(path).length
        if size != framed:  # TensorFlow's reader stops without a word at a file cut inside a record's header
            raise CifarDataError(f"{path}: {size - framed} bytes after record {count} are not a whole record: "
                                 f"the file was cut short inside a record's header; it holds {count} whole "
                                 f"records before that. Make it again with: "
                                 f"{GENERATE_COMMAND.format(os.path.dirname(path))}")
    except tf.errors.DataLossError as error:
        whole = _whole_records(path, count)
        raise CifarDataError(f"{path}: corrupt TFRecord data after record {whole}, cut short or damaged "
                             f"({error.message.splitlines()[0]}); it holds {whole} whole records before that. "
                             f"Make it again with: {GENERATE_COMMAND.format(os.path.dirname(path))}") from error
    written = read_manifest(os.path.dirname(path)).get(os.path.basename(path))
    if written is not None:
        problem = None
        if written["records"] != count:
            problem = f"holds {count} records but the generator wrote {written['records']}"
        elif written["sha256"] != file_sha256(path):
            problem = "is not the file the generator wrote (its SHA-256 differs)"
        if problem:
            raise CifarDataError(f"{path} {problem} ({MANIFEST}); make it again with: "
                                 f"{GENERATE_COMMAND.format(os.path.dirname(path))}")
    return count


def file_sha256(path):
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(data_dir):
    """{file name: {"records": N, "sha256": hex}} that generate_cifar10_tfrecords
    wrote, or {} for files made elsewhere (the scan alone checks those)."""
    path = os.path.join(data_dir, MANIFEST)
    if not tf.io.gfile.exists(path):
        return {}
    try:
        with tf.io.gfile.GFile(path) as manifest:
            return {name: {"records": int(entry["records"]), "sha256": str(entry["sha256"])}
                    for name, entry in json.load(manifest).items()}
    except (ValueError, TypeError, AttributeError, KeyError) as error:
        raise CifarDataError(f"{path} is not a manifest of record counts and checksums: {error}") from error


def preflight(data_dir):
    """Checks every record of train.tfrecords and eval.tfrecords (and of
    validation.tfrecords when it is there) before training; returns {subset: records}."""
    counts = {}
    for subset in SUBSETS:
        dataset = Cifar10DataSet(data_dir, subset)
        if subset != "validation" or tf.io.gfile.exists(dataset.get_filenames()[0]):
            counts[subset] = dataset.num_examples_per_epoch()
    return counts


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
