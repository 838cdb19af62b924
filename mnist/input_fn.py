"""MNIST input: IDX files (gz or raw) or a Keras-style mnist.npz, and the tf.data pipeline.

Any data set in these formats works, not only digits: images are
[N, rows, cols] uint8 and the number of classes comes from the labels.
Splits: `train` and `validation` are a seeded, disjoint split of the
training file; `test` is the t10k file.
"""

import dataclasses
import os
import zlib

import numpy as np
import tensorflow as tf

from common.state.idx_files import DataFileError, read_idx

PACKAGED_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
IDX_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
NPZ_NAME = "mnist.npz"


def _find(data_dir, name):
    candidates = [os.path.join(data_dir, name), os.path.join(data_dir, name + ".gz")]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate):
            return candidate
    raise DataFileError(data_dir, f"missing file: looked for {' and '.join(os.path.basename(c) for c in candidates)}")


def _check_pair(images, labels, images_path, labels_path):
    if images.ndim != 3:
        raise DataFileError(images_path, f"images must be [count, rows, cols], got shape {list(images.shape)}")
    if labels.ndim != 1:
        raise DataFileError(labels_path, f"labels must be [count], got shape {list(labels.shape)}")
    if len(images) != len(labels):
        raise DataFileError(
            labels_path, f"{len(labels)} labels for {len(images)} images in {images_path}")
    if len(labels) == 0:
        raise DataFileError(labels_path, "holds no examples")
    if labels.min() < 0:
        raise DataFileError(labels_path, f"negative label {labels.min()}")
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
                raise DataFileError(path, f"missing arrays {sorted(missing)}")
            arrays = {key: archive[key] for key in ("x_train", "y_train", "x_test", "y_test")}
    except (OSError, ValueError, zlib.error, EOFError) as error:
        if isinstance(error, DataFileError):
            raise
        raise DataFileError(path, f"not a readable .npz archive: {error}") from error
    train = _check_pair(arrays["x_train"], arrays["y_train"], path, path)
    test = _check_pair(arrays["x_test"], arrays["y_test"], path, path)
    return MnistData(*train, *test, source=path)


def load(data_dir=PACKAGED_DATA_DIR):
    """Reads the train and test files from `data_dir` (IDX first, else mnist.npz),
    or from `data_dir` itself when it is an .npz file."""
    if data_dir.endswith(".npz"):
        return _load_npz(data_dir)
    if not tf.io.gfile.isdir(data_dir):
        raise DataFileError(data_dir, "is not a directory")
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
