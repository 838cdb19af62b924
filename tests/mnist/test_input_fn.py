"""mnist.input_fn: IDX and npz reading, bad files, splits, the pipeline."""

import os

import numpy as np
import pytest

from common.state import idx_files
from mnist import input_fn


def write_sample(directory, num_train=60, num_test=20, classes=10, gz=True, seed=0):
    rng = np.random.RandomState(seed)
    suffix = ".gz" if gz else ""
    arrays = {
        "train-images-idx3-ubyte": rng.randint(0, 256, (num_train, 28, 28)).astype(np.uint8),
        "train-labels-idx1-ubyte": (np.arange(num_train) % classes).astype(np.uint8),
        "t10k-images-idx3-ubyte": rng.randint(0, 256, (num_test, 28, 28)).astype(np.uint8),
        "t10k-labels-idx1-ubyte": (np.arange(num_test) % classes).astype(np.uint8),
    }
    for name, array in arrays.items():
        idx_files.write_idx(os.path.join(directory, name + suffix), array)
    return arrays


@pytest.mark.parametrize("gz", [True, False])
def test_reads_idx_files_gz_or_raw(tmp_path, gz):
    arrays = write_sample(str(tmp_path), gz=gz)
    data = input_fn.load(str(tmp_path))
    np.testing.assert_array_equal(data.train_images, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(data.test_labels, arrays["t10k-labels-idx1-ubyte"])
    assert (len(data.train_labels), len(data.test_labels), data.num_classes) == (60, 20, 10)


def test_packaged_mnist_is_the_real_one():
    data = input_fn.load()
    assert data.train_images.shape == (60000, 28, 28) and data.test_images.shape == (10000, 28, 28)
    assert data.num_classes == 10
    assert np.bincount(data.test_labels).tolist()[:3] == [980, 1135, 1032]


def test_npz_archive(tmp_path):
    rng = np.random.RandomState(1)
    x_train = rng.randint(0, 256, (30, 28, 28)).astype(np.uint8)
    x_test = rng.randint(0, 256, (8, 28, 28)).astype(np.uint8)
    np.savez(tmp_path / "mnist.npz", x_train=x_train, y_train=np.arange(30) % 4, x_test=x_test, y_test=np.arange(8) % 4)
    data = input_fn.load(str(tmp_path))
    np.testing.assert_array_equal(data.train_images, x_train)
    assert data.num_classes == 4
    np.testing.assert_array_equal(input_fn.load(str(tmp_path / "mnist.npz")).test_images, x_test)
    np.savez(tmp_path / "bad.npz", x_train=x_train)
    with pytest.raises(input_fn.DataFileError, match=r"bad.npz: missing arrays \['x_test', 'y_test', 'y_train'\]"):
        input_fn.load(str(tmp_path / "bad.npz"))


def test_bad_files_name_the_file_and_the_problem(tmp_path):
    write_sample(str(tmp_path), gz=False)
    images = tmp_path / "train-images-idx3-ubyte"
    good = images.read_bytes()

    images.write_bytes(b"\x12\x34" + good[2:])
    with pytest.raises(input_fn.DataFileError, match=r"train-images-idx3-ubyte: wrong magic number 0x12340803"):
        input_fn.load(str(tmp_path))
    images.write_bytes(good[:-100])
    with pytest.raises(input_fn.DataFileError,
                       match=r"train-images-idx3-ubyte: truncated data: the header \[60, 28, 28\]"):
        input_fn.load(str(tmp_path))
    images.write_bytes(good)
    idx_files.write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros(59, np.uint8))
    with pytest.raises(input_fn.DataFileError, match="59 labels for 60 images"):
        input_fn.load(str(tmp_path))
    os.remove(tmp_path / "t10k-images-idx3-ubyte")
    idx_files.write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros(60, np.uint8))
    with pytest.raises(input_fn.DataFileError,
                       match="looked for t10k-images-idx3-ubyte and t10k-images-idx3-ubyte.gz"):
        input_fn.load(str(tmp_path))


def test_split_is_disjoint_seeded_and_sized():
    train, validation = input_fn.split_indices(1000, 0.2, seed=3)
    assert (len(train), len(validation)) == (800, 200)
    assert not set(train) & set(validation) and set(train) | set(validation) == set(range(1000))
    again, _ = input_fn.split_indices(1000, 0.2, seed=3)
    other, _ = input_fn.split_indices(1000, 0.2, seed=4)
    np.testing.assert_array_equal(train, again)
    assert not np.array_equal(train, other)
    with pytest.raises(ValueError, match="validation_fraction"):
        input_fn.split_indices(10, 1.0)


def test_pipeline_shapes_and_range(tmp_path):
    arrays = write_sample(str(tmp_path), num_train=70)
    images, labels = arrays["train-images-idx3-ubyte"], arrays["train-labels-idx1-ubyte"].astype(np.int64)
    train = input_fn.dataset(images, labels, 32, training=True, seed=1)
    x, y = next(iter(train))
    assert x.shape == (32, 28, 28, 1) and x.dtype.name == "float32" and y.shape == (32,)
    assert 0.0 <= float(x.numpy().min()) and float(x.numpy().max()) <= 1.0
    assert float(x.numpy().max()) > 0.99
    sizes = [len(y) for _, y in input_fn.dataset(images, labels, 32, training=False)]
    assert sizes == [32, 32, 6]
    first_eval = next(iter(input_fn.dataset(images, labels, 70, training=False)))[0].numpy()
    np.testing.assert_allclose(first_eval[..., 0], images / 255.0, rtol=1e-6)
