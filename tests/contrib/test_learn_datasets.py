"""common.contrib.learn_datasets: TF1's MNIST reader and contrib.learn's data sets, on the real MNIST files."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from common.contrib import learn, learn_datasets
from common.state import idx_files
from mnist import input_fn as mnist_input


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    """The project's copy of MNIST's four gz files, in a directory of their own."""
    directory = tmp_path_factory.mktemp("MNIST_data")
    for name in learn_datasets.MNIST_FILES:
        shutil.copy(os.path.join(mnist_input.PACKAGED_DATA_DIR, name), directory / name)
    return str(directory)


def test_read_data_sets_splits_scales_and_flattens_the_real_files_as_tf1(mnist_dir, capsys):
    data = learn_datasets.read_data_sets(mnist_dir)
    assert capsys.readouterr().out.count("Extracting " + mnist_dir) == 4
    raw_images = idx_files.read_idx(os.path.join(mnist_dir, "train-images-idx3-ubyte.gz"))
    raw_labels = idx_files.read_idx(os.path.join(mnist_dir, "train-labels-idx1-ubyte.gz"))
    assert (data.train.num_examples, data.validation.num_examples, data.test.num_examples) == (55000, 5000, 10000)
    assert data.train.images.shape == (55000, 784) and data.train.images.dtype == np.float32
    scaled = raw_images[5000].reshape(784).astype(np.float32) * np.float32(1.0 / 255.0)  # (TF1's, not a division)
    np.testing.assert_array_equal(data.train.images[0], scaled)
    np.testing.assert_array_equal(data.validation.labels, raw_labels[:5000])
    assert data.train.labels.dtype == np.uint8 and data.train.images.max() == 1.0
    assert np.bincount(data.test.labels).tolist()[:3] == [980, 1135, 1032]

    as_bytes = learn_datasets.read_data_sets(mnist_dir, one_hot=True, dtype=tf.uint8, reshape=False,
                                             validation_size=0)
    assert as_bytes.train.images.shape == (60000, 28, 28, 1) and as_bytes.train.images.dtype == np.uint8
    assert as_bytes.test.labels.shape == (10000, 10) and as_bytes.test.labels.sum(axis=1).tolist() == [1.0] * 10000
    np.testing.assert_array_equal(as_bytes.test.labels.argmax(axis=1), data.test.labels)
    with pytest.raises(ValueError, match="Validation size should be between 0 and 60000. Received: 60001."):
        learn_datasets.read_data_sets(mnist_dir, validation_size=60001)
    with pytest.raises(TypeError, match="invalid image dtype"):
        learn_datasets.read_data_sets(mnist_dir, dtype=tf.int32)


def test_next_batch_walks_epochs_as_tf1_shuffling_with_numpys_generator():
    images = np.arange(10, dtype=np.uint8).reshape(10, 1, 1, 1)
    dataset = learn_datasets.DataSet(images, np.arange(10), dtype=tf.uint8, seed=3)
    batches = [dataset.next_batch(4) for _ in range(5)]
    firsts = np.concatenate([labels for _, labels in batches])
    assert sorted(firsts[:10].tolist()) == list(range(10))  # every example once an epoch
    assert batches[2][1].shape == (4,) and dataset.epochs_completed == 1  # (the batch that crossed counted it)
    assert sorted(firsts[10:20].tolist()) == list(range(10))
    np.testing.assert_array_equal(batches[0][0].reshape(4), batches[0][1])  # images and labels stay paired
    assert firsts[:10].tolist() != list(range(10))  # shuffled
    again = learn_datasets.DataSet(images, np.arange(10), dtype=tf.uint8, seed=3)
    np.testing.assert_array_equal(np.concatenate([again.next_batch(4)[1] for _ in range(5)]), firsts)
    again.next_batch(1)
    assert again.epochs_completed == 2
    in_order = learn_datasets.DataSet(images, np.arange(10), dtype=tf.uint8)
    assert [in_order.next_batch(4, shuffle=False)[1].tolist() for _ in range(3)] == [
        [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    fake = learn_datasets.read_data_sets("unused", fake_data=True, one_hot=True)
    fake_images, fake_labels = fake.train.next_batch(2, fake_data=True)
    assert fake.train.num_examples == 10000 and fake_images == [[1] * 784] * 2 and fake_labels[0][:2] == [1, 0]


def test_files_come_from_source_url_when_absent_and_a_file_that_cannot_be_fetched_is_named(mnist_dir, tmp_path):
    target = tmp_path / "fresh"
    mirror = tmp_path / "mirror"
    shutil.copytree(mnist_dir, mirror)
    fetched = learn_datasets.read_data_sets(str(target), validation_size=0, source_url=mirror.as_uri() + "/")
    assert fetched.train.num_examples == 60000
    assert sorted(os.listdir(target)) == sorted(learn_datasets.MNIST_FILES)
    with pytest.raises(OSError, match=r"train-images-idx3-ubyte.gz is not in .*nowhere.* could not be fetched .*"
                                      r"put the file there"):
        learn_datasets.read_data_sets(str(tmp_path / "nowhere"), source_url=(tmp_path / "none").as_uri() + "/")
    assert os.listdir(tmp_path / "nowhere") == []


def test_a_file_of_the_wrong_kind_is_named(mnist_dir):
    labels = os.path.join(mnist_dir, "train-labels-idx1-ubyte.gz")
    with tf.io.gfile.GFile(labels, "rb") as f, pytest.raises(ValueError, match=r"Invalid MNIST image file .*"
                                                                                r"train-labels-idx1-ubyte.gz"):
        learn_datasets.extract_images(f)


def test_csv_data_sets_with_and_without_a_header(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("3,2,a,b\n1,2.5,0\n3,4.5,1\n5,6,1\n")
    data = learn_datasets.load_csv_with_header(str(path), target_dtype=np.int32, features_dtype=np.float32)
    np.testing.assert_array_equal(data.data, [[1, 2.5], [3, 4.5], [5, 6]])
    assert data.target.tolist() == [0, 1, 1] and data.target.dtype == np.int32
    first = learn_datasets.load_csv_with_header(str(path), np.int32, np.float32, target_column=0)
    assert first.target.tolist() == [1, 3, 5]
    plain = tmp_path / "plain.csv"
    plain.write_text("2,some words\n7,more words\n")
    text = learn_datasets.load_csv_without_header(str(plain), np.int32, str, target_column=0)
    assert text.target.tolist() == [2, 7] and text.data.tolist() == [["some words"], ["more words"]]
    learn_datasets.shrink_csv(str(plain), 2)
    assert (tmp_path / "plain_small.csv").read_text().splitlines() == ["2,some words"]

    path.write_text("4,2\n1,2,0\n")
    with pytest.raises(ValueError, match="train.csv: the header says 4 samples, the file has 1 rows"):
        learn_datasets.load_csv_with_header(str(path), np.int32, np.float32)
    path.write_text("2,2\n1,2,0\n1,x,0\n")
    with pytest.raises(ValueError, match="train.csv, line 3: could not convert"):
        learn_datasets.load_csv_with_header(str(path), np.int32, np.float32)


def test_load_dataset_by_name_and_contribs_modules_as_attributes():
    iris = learn.datasets.load_dataset("iris")
    assert iris.data.shape == (150, 4) and np.bincount(iris.target).tolist() == [50, 50, 50]
    np.testing.assert_allclose(iris.data[0], [5.1, 3.5, 1.4, 0.2])
    assert learn.datasets.base.load_csv_with_header is learn_datasets.load_csv_with_header
    assert learn.datasets.mnist.read_data_sets is learn_datasets.read_data_sets
    with pytest.raises(ValueError, match="Name of dataset is not found: cifar"):
        learn.datasets.load_dataset("cifar")
    with pytest.raises(ValueError, match="does not ship boston_house_prices.csv; pass data_path="):
        learn.datasets.load_dataset("boston")
    with pytest.raises(ValueError, match=r"load_dataset\('dbpedia'\): not provided here"):
        learn.datasets.load_dataset("dbpedia")


def test_maybe_download_takes_a_local_file_and_names_what_it_could_not_fetch(tmp_path):
    (tmp_path / "data.bin").write_bytes(b"local")
    assert learn_datasets.maybe_download("data.bin", str(tmp_path), "http://unused.invalid/data.bin") == \
        str(tmp_path / "data.bin")
    with pytest.raises(OSError, match="missing.bin is not in .* could not be fetched"):
        learn_datasets.maybe_download("missing.bin", str(tmp_path), (tmp_path / "nowhere" / "missing.bin").as_uri())
    assert not (tmp_path / "missing.bin.part").exists()
