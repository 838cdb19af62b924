"""tf.contrib.learn.datasets, and TF1's MNIST tutorial reader (tensorflow.examples.tutorials.mnist.input_data).

TF1-era programs got MNIST from `input_data.read_data_sets("MNIST_data/")` or
`tf.contrib.learn.datasets.load_dataset("mnist")`, and CSV data from
`datasets.base.load_csv_with_header`; TensorFlow 2 has none of them. Here
they read the same files into the same arrays: MNIST's four gz IDX files
in the directory named (fetched only when absent, so a directory holding
them works offline), the first 5000 training images held out for
validation, images flattened to 784 values scaled to [0, 1] unless asked
otherwise, and `DataSet.next_batch` shuffling with numpy's global generator
as TF1's did, so a program that seeds numpy gets TF1's batches.
`base` and `mnist`, which were modules of tf.contrib.learn.datasets, are
this module: a program reaches `learn.datasets.base.load_csv_with_header`.
"""

import collections
import csv
import gzip
import os
import sys
import urllib.request

import numpy as np
import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state import idx_files

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"  # (TF1's: the CVDF mirror of LeCun's)
MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
               "t10k-labels-idx1-ubyte.gz")
_PACKAGED_IRIS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "iris.csv")
_FAKE_EXAMPLES = 10000  # (a fake DataSet's size in TF1)

Dataset = collections.namedtuple("Dataset", ["data", "target"])
Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def maybe_download(filename, work_directory, source_url):
    """work_directory/filename, fetched from source_url only when it is not there already."""
    path = os.path.join(work_directory, filename)
    if tf.io.gfile.exists(path):
        return path
    tf.io.gfile.makedirs(work_directory)
    logging.info("Downloading %s to %s", source_url, path)
    temp = path + ".part"
    try:
        urllib.request.urlretrieve(source_url, temp)
    except OSError as error:
        if os.path.exists(temp):
            os.remove(temp)
        raise OSError(f"maybe_download: {filename} is not in {work_directory} and {source_url} could not be "
                      f"fetched ({error}); put the file there") from error
    os.replace(temp, path)
    return path


def _csv_rows(filename):
    with tf.io.gfile.GFile(filename, "r") as f:
        return list(csv.reader(f))


def _row_arrays(filename, rows, first_line, target_dtype, features_dtype, target_column):
    """(features, target) of the rows, each row's target popped at target_column; a row that does not parse
    is named by file and line."""
    data, target = [], []
    for line, row in enumerate(rows, start=first_line):
        try:
            target.append(np.asarray(row.pop(target_column), dtype=target_dtype))
            data.append(np.asarray(row, dtype=features_dtype))
        except (IndexError, ValueError) as error:
            raise ValueError(f"{filename}, line {line}: {error}") from error
    return data, target


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """A CSV file whose first row says how many samples and features follow (as iris.csv did): a Dataset."""
    header, *rows = _csv_rows(filename)
    try:
        n_samples, n_features = int(header[0]), int(header[1])
    except (IndexError, ValueError) as error:
        raise ValueError(f"{filename}: the header row must start with the number of samples and of features, "
                         f"got {header[:2]}") from error
    if len(rows) != n_samples:
        raise ValueError(f"{filename}: the header says {n_samples} samples, the file has {len(rows)} rows")
    data, target = _row_arrays(filename, rows, 2, target_dtype, features_dtype, target_column)
    data = np.array(data, dtype=features_dtype).reshape(n_samples, -1)
    if data.shape[1] != n_features:
        raise ValueError(f"{filename}: the header says {n_features} features, the rows have {data.shape[1]}")
    return Dataset(data=data, target=np.array(target, dtype=target_dtype))


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """A CSV file of rows only: a Dataset of its features and targets."""
    data, target = _row_arrays(filename, _csv_rows(filename), 1, target_dtype, features_dtype, target_column)
    return Dataset(data=np.array(data), target=np.array(target, dtype=target_dtype))


def shrink_csv(filename, ratio):
    """Writes every ratio-th row of filename to its `_small` sibling (data.csv -> data_small.csv)."""
    rows = _csv_rows(filename)
    with tf.io.gfile.GFile(filename.replace(".", "_small."), "w") as f:
        csv.writer(f).writerows(rows[::ratio])


def load_iris(data_path=None):
    """The iris data (150 samples, 4 features, classes 0-2): TF1's bundled copy, here in common/tf1/data."""
    return load_csv_with_header(data_path or _PACKAGED_IRIS, target_dtype=int, features_dtype=float)


def load_boston(data_path=None):
    """The Boston housing data, read from data_path: the copy TF1 bundled is not shipped here (scikit-learn
    withdrew the data set in 1.2 for a feature built on race)."""
    if data_path is None:
        raise ValueError("load_boston: this project does not ship boston_house_prices.csv; pass data_path= a copy "
                         "(a header row '506,13,...' and then the rows, the price last)")
    return load_csv_with_header(data_path, target_dtype=float, features_dtype=float)


def dense_to_one_hot(labels_dense, num_classes):
    """[N] class ids as [N, num_classes] one-hot rows (float64, as TF1's)."""
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def _idx_array(f, rank, kind):
    name = getattr(f, "name", "<file>")
    print("Extracting", name)  # (TF1's tutorial printed each file it read)
    with gzip.GzipFile(fileobj=f) as unzipped:
        array = idx_files.parse_idx(unzipped.read(), name)
    if array.ndim != rank or array.dtype != np.uint8:
        raise ValueError(f"Invalid MNIST {kind} file {name}: expected magic number {2048 + rank} (uint8, rank "
                         f"{rank}), it holds a {array.dtype} array of rank {array.ndim}")
    return array


def extract_images(f):
    """A gz IDX file of images, opened: [N, rows, cols, 1] uint8."""
    return _idx_array(f, 3, "image")[..., np.newaxis]


def extract_labels(f, one_hot=False, num_classes=10):
    """A gz IDX file of labels, opened: [N] uint8, or one-hot rows."""
    labels = _idx_array(f, 1, "label")
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """One split of MNIST, with TF1's next_batch: shuffled by numpy's global generator before the first
    epoch and after each, a batch across an epoch's end taking the rest of one epoch and the start of the next."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=tf.float32, reshape=True, seed=None):
        graph_seed, op_seed = tf.compat.v1.get_seed(seed)
        np.random.seed(graph_seed if seed is None else op_seed)  # (as TF1 seeded it, for each split)
        dtype = tf.as_dtype(dtype).base_dtype
        if dtype not in (tf.uint8, tf.float32):
            raise TypeError(f"DataSet: invalid image dtype {dtype!r}, expected uint8 or float32")
        self.one_hot = one_hot
        if fake_data:
            self._num_examples = _FAKE_EXAMPLES
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"DataSet: {images.shape[0]} images but {labels.shape[0]} labels")
            self._num_examples = images.shape[0]
            if reshape:
                if images.shape[3] != 1:
                    raise ValueError(f"DataSet: reshape=True flattens one-channel images, got shape {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == tf.float32:
                images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def _shuffle(self):
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next batch_size (images, labels)."""
        if fake_data:
            label = [1] + [0] * 9 if self.one_hot else 0
            return [[1] * 784 for _ in range(batch_size)], [label for _ in range(batch_size)]
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch += batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        self._epochs_completed += 1
        rest_images, rest_labels = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        end = self._index_in_epoch
        return (np.concatenate((rest_images, self._images[:end]), axis=0),
                np.concatenate((rest_labels, self._labels[:end]), axis=0))


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=tf.float32, reshape=True, validation_size=5000,
                   seed=None, source_url=DEFAULT_SOURCE_URL):
    """MNIST from the four gz IDX files in train_dir (fetched from source_url when absent): Datasets of
    train (55,000), validation (the first validation_size training images) and test (10,000)."""
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    if fake_data:
        return Datasets(*(DataSet([], [], fake_data=True, one_hot=one_hot, **options) for _ in range(3)))
    arrays = []
    for name in MNIST_FILES:
        path = maybe_download(name, train_dir, (source_url or DEFAULT_SOURCE_URL) + name)
        with tf.io.gfile.GFile(path, "rb") as f:
            arrays.append(extract_images(f) if "images" in name else extract_labels(f, one_hot=one_hot))
    train_images, train_labels, test_images, test_labels = arrays
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. Received: {validation_size}.")
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size], **options),
        test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir="MNIST-data"):
    return read_data_sets(train_dir)


DATASETS = {"iris": load_iris, "boston": load_boston, "mnist": load_mnist}


def load_dataset(name, size="small", test_with_fake_data=False):
    """A data set by name: iris and boston as a Dataset, mnist as Datasets (from ./MNIST-data)."""
    del size, test_with_fake_data  # (they chose dbpedia's size and fake copy)
    if name == "dbpedia":
        raise ValueError("load_dataset('dbpedia'): not provided here; read dbpedia_csv/train.csv and test.csv with "
                         "load_csv_without_header(path, np.int32, str, target_column=0)")
    if name not in DATASETS:
        raise ValueError(f"Name of dataset is not found: {name} (known: {', '.join(sorted(DATASETS))})")
    return DATASETS[name]()


# tf.contrib.learn.datasets held base and mnist as modules of their own; here their names are this module's.
base = mnist = sys.modules[__name__]
