"""MNIST input: IDX files (gz or raw) or a Keras-style mnist.npz, and the tf.data pipeline.

Any data set in these formats works, not only digits: images are
[N, rows, cols] uint8 and the number of classes comes from the labels.
Splits: `train` and `validation` are a seeded, disjoint split of the
training file; `test` is the t10k file.
"""

import dataclasses
import gzip
import os
import zlib

import numpy as np
import tensorflow as tf

from common.state import atomic

PACKAGED_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
IDX_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
NPZ_NAME = "mnist.npz"
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_IDX_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09}


class MnistDataError(ValueError):
    """A data file that cannot be used; the message names the file."""

    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")
        self.path = path


def parse_idx(data, path="<bytes>"):
    """The array stored in IDX bytes: magic 0x0000, a type code, the rank, big-endian sizes."""
    if len(data) < 4:
        raise MnistDataError(path, f"{len(data)} bytes is too short for an IDX header")
    if data[0] or data[1] or data[2] not in _IDX_TYPES or not data[3]:
        magic = int.from_bytes(data[:4], "big")
        raise MnistDataError(
            path, f"wrong magic number 0x{magic:08x}; IDX files start with 0x00000801 (labels) "
            "or 0x00000803 (images)")
    rank = data[3]
    header = 4 + 4 * rank
    if len(data) < header:
        raise MnistDataError(path, f"truncated header: rank {rank} needs {header} bytes, file has {len(data)}")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    dtype = np.dtype(_IDX_TYPES[data[2]])
    count = int(np.prod(dims, dtype=object))
    expected = header + count * dtype.itemsize
    if len(data) < expected:
        raise MnistDataError(
            path, f"truncated data: the header {dims} promises {expected} bytes, the file has {len(data)}")
    if len(data) > expected:
        raise MnistDataError(path, f"{len(data) - expected} unexpected bytes after the {dims} array")
    return np.frombuffer(data, dtype, offset=header, count=count).reshape(dims)


def read_idx(path):
    """Reads an IDX file, gzip-compressed when its name ends in .gz."""
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error, tf.errors.OpError) as error:
        raise MnistDataError(path, f"cannot be read: {error}") from error
    return parse_idx(data, path)


def write_idx(path, array):
    """Writes a uint8/int8 array as IDX (gzip when the name ends in .gz), atomically."""
    array = np.asarray(array)
    if array.dtype not in _IDX_CODES or not 1 <= array.ndim <= 255:
        raise ValueError(f"write_idx: need a uint8 or int8 array of rank 1-255, got {array.dtype} rank {array.ndim}")
    data = bytes([0, 0, _IDX_CODES[array.dtype], array.ndim])
    data += b"".join(int(d).to_bytes(4, "big") for d in array.shape) + array.tobytes()
    atomic.write_bytes(path, gzip.compress(data) if path.endswith(".gz") else data)


def _find(data_dir, name):
    candidates = [os.path.join(data_dir, name), os.path.join(data_dir, name + ".gz")]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate):
            return candidate
    raise MnistDataError(data_dir, f"missing file: looked for {' and '.join(os.path.basename(c) for c in candidates)}")


def _check_pair(images, labels, images_path, labels_path):
    if images.ndim != 3:
        raise MnistDataError(images_path, f"images must be [count, rows, cols], got shape {list(images.shape)}")
    if labels.ndim != 1:
        raise MnistDataError(labels_path, f"labels must be [count], got shape {list(labels.shape)}")
    if len(images) != len(labels):
        raise MnistDataError(
            labels_path, f"{len(labels)} labels for {len(images)} images in {images_path}")
    if len(labels) == 0:
        raise MnistDataError(labels_path, "holds no examples")
    if labels.min() < 0:
        raise MnistDataError(labels_path, f"negative label {labels.min()}")
    return images.astype(np.uint8, copy=False), labels.astype(np.int64)


@dataclasses.dataclass
class MnistData:
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    source: str

    @property
    def num_classes(self):
        return int(max(self.train_labels.max(), self.test_labels.max())) + 1

    @property
    def image_shape(self):
        return self.train_images.shape[1:]


def _load_npz(path):
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = {"x_train", "y_train", "x_test", "y_test"} - set(archive.files)
            if missing:
                raise MnistDataError(path, f"missing arrays {sorted(missing)}")
            arrays = {key: archive[key] for key in ("x_train", "y_train", "x_test", "y_test")}
    except (OSError, ValueError, zlib.error, EOFError) as error:
        if isinstance(error, MnistDataError):
            raise
        raise MnistDataError(path, f"not a readable .npz archive: {error}") from error
    train = _check_pair(arrays["x_train"], arrays["y_train"], path, path)
    test = _check_pair(arrays["x_test"], arrays["y_test"], path, path)
    return MnistData(*train, *test, source=path)


def load(data_dir=PACKAGED_DATA_DIR):
    """Reads the train and test files from `data_dir` (IDX first, else mnist.npz),
    or from `data_dir` itself when it is an .npz file."""
    if data_dir.endswith(".npz"):
        return _load_npz(data_dir)
    if not tf.io.gfile.isdir(data_dir):
        raise MnistDataError(data_dir, "is not a directory")
    npz = os.path.join(data_dir, NPZ_NAME)
    has_idx = any(tf.io.gfile.exists(os.path.join(data_dir, IDX_FILES["train"][0] + s)) for s in ("", ".gz"))
    if not has_idx and tf.io.gfile.exists(npz):
        return _load_npz(npz)
    arrays = []
    for subset in ("train", "test"):
        paths = [_find(data_dir, name) for name in IDX_FILES[subset]]
        arrays.extend(_check_pair(read_idx(paths[0]), read_idx(paths[1]), *paths))
    return MnistData(*arrays, source=data_dir)


def split_indices(count, validation_fraction, seed=0):
    """Disjoint (train, validation) index arrays; the same for the same seed."""
    if not 0 <= validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in [0, 1), got {validation_fraction}")
    order = np.random.RandomState(seed).permutation(count)
    num_validation = int(round(count * validation_fraction))
    return np.sort(order[num_validation:]), np.sort(order[:num_validation])


def subsets(data, validation_fraction, seed=0):
    """{"train", "validation", "test"} -> (images, labels)."""
    train, validation = split_indices(len(data.train_labels), validation_fraction, seed)
    return {
        "train": (data.train_images[train], data.train_labels[train]),
        "validation": (data.train_images[validation], data.train_labels[validation]),
        "test": (data.test_images, data.test_labels),
    }


def _scale(images, labels):
    return tf.cast(images, tf.float32)[..., tf.newaxis] / 255.0, labels


def dataset(images, labels, batch_size, training, seed=None):
    """Batches of ([B, rows, cols, 1] float32 in [0, 1], [B] int64).

    training: shuffled each epoch, repeated forever, full batches only.
    """
    data = tf.data.Dataset.from_tensor_slices((images, labels))
    if training:
        data = data.shuffle(len(labels), seed=seed, reshuffle_each_iteration=True).repeat()
    data = data.batch(batch_size, drop_remainder=training)
    return data.map(_scale, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def input_fn(images, labels, batch_size, training, seed=None):
    """An Estimator input_fn over these arrays."""
    return lambda: dataset(images, labels, batch_size, training, seed)
