"""CIFAR-10 data: tarball -> TFRecords -> parser, exact pixels, splits, errors."""

import json
import os
import pickle
import re

import numpy as np
import pytest
import tensorflow as tf

from cifar10 import generate_cifar10_tfrecords as generator
from cifar10 import input_fn
from tests import cifar_files


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("cifar"))
    batches = cifar_files.make_tarball(directory, per_batch=40)
    counts = generator.generate(directory)
    return directory, batches, counts


def all_examples(directory, subset, use_distortion=False):
    dataset = input_fn.Cifar10DataSet(directory, subset, use_distortion)
    records = tf.data.TFRecordDataset(dataset.get_filenames()).map(dataset.parser)
    images, labels = zip(*[(image.numpy(), label.numpy()) for image, label in records])
    return np.stack(images), np.array(labels)


def test_every_pixel_and_label_survives_the_round_trip(generated):
    directory, batches, counts = generated
    assert counts == {"train": 160, "validation": 40, "eval": 40}
    expected = {
        "train": np.concatenate([batches[f"data_batch_{i}"][0] for i in range(1, 5)]),
        "validation": batches["data_batch_5"][0],
        "eval": batches["test_batch"][0],
    }
    for subset, source in expected.items():
        images, labels = all_examples(directory, subset)
        assert images.dtype == np.float32 and images.shape == (len(source), 32, 32, 3)
        hwc = source.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        np.testing.assert_array_equal(images, hwc.astype(np.float32))
        assert images[0, 0, 1, 2] == source[0, 2 * 1024 + 0 * 32 + 1]  # channel-major source
    np.testing.assert_array_equal(all_examples(directory, "eval")[1], batches["test_batch"][1])
    for subset, count in counts.items():
        assert input_fn.Cifar10DataSet(directory, subset).num_examples_per_epoch() == count


def test_45k_5k_style_split(tmp_path):
    cifar_files.make_tarball(str(tmp_path), per_batch=40)
    counts = generator.generate(str(tmp_path), validation_size=20)
    assert counts == {"train": 180, "validation": 20, "eval": 40}


def test_distortion_only_on_training_images(generated):
    directory, batches, _ = generated
    train = input_fn.Cifar10DataSet(directory, "train", use_distortion=True).make_batch(16, seed=1)
    images, labels = next(iter(train))
    assert images.shape == (16, 32, 32, 3) and labels.shape == (16,)
    source = {tuple(img.ravel()) for img in all_examples(directory, "train")[0]}
    assert sum(tuple(img.ravel()) not in source for img in images.numpy()) > 8
    eval_images, _ = next(iter(input_fn.Cifar10DataSet(directory, "eval", use_distortion=True).make_batch(40)))
    np.testing.assert_array_equal(eval_images.numpy(), all_examples(directory, "eval")[0])
    sizes = [len(batch_labels) for _, batch_labels in input_fn.Cifar10DataSet(directory, "eval").make_batch(15)]
    assert sizes == [15, 15, 10]


def test_a_seed_gives_the_same_distorted_batches_every_time(generated):
    directory = generated[0]

    def first_batches(seed):
        batches = input_fn.Cifar10DataSet(directory, "train", use_distortion=True).make_batch(16, seed=seed)
        return np.concatenate([images.numpy() for images, _ in batches.take(3)])

    np.testing.assert_array_equal(first_batches(5), first_batches(5))
    assert not np.array_equal(first_batches(5), first_batches(6))


def test_a_crash_mid_write_leaves_no_file(tmp_path, monkeypatch):
    batches = cifar_files.make_tarball(str(tmp_path), per_batch=40)
    calls = []

    def failing_example(image, label):
        calls.append(1)
        if len(calls) > 50:
            raise RuntimeError("disk full")
        return original(image, label)

    original = generator._example
    monkeypatch.setattr(generator, "_example", failing_example)
    with pytest.raises(RuntimeError, match="disk full"):
        generator.generate(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == [generator.CIFAR_FILENAME]
    assert batches


def test_bad_tarballs_are_clear_errors(tmp_path):
    path = tmp_path / generator.CIFAR_FILENAME
    path.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(input_fn.CifarDataError, match="not a readable .tar.gz"):
        generator.read_tarball(str(path))
    wrong = cifar_files.batch_bytes(np.zeros((5, 1024), np.uint8), [1] * 5)
    cifar_files.make_tarball(str(tmp_path), overrides={"data_batch_3": wrong})
    with pytest.raises(input_fn.CifarDataError,
                       match=r"data_batch_3: b'data' must be uint8 \[N, 3072\], got \(5, 1024\)"):
        generator.read_tarball(str(path))
    evil = pickle.dumps({b"data": os.system}, protocol=2)
    cifar_files.make_tarball(str(tmp_path), overrides={"test_batch": evil})
    with pytest.raises(input_fn.CifarDataError, match="refusing to load posix.system"):
        generator.read_tarball(str(path))


def test_offline_without_tarball_says_where_to_put_it(tmp_path):
    with pytest.raises(input_fn.CifarDataError, match=r"could not be downloaded .* put it at .*cifar-10-python.tar.gz"):
        generator.generate(str(tmp_path), url="http://127.0.0.1:9/cifar-10-python.tar.gz")
    assert os.listdir(tmp_path) == []


def test_missing_or_empty_tfrecords_name_the_file_and_the_fix(tmp_path):
    with pytest.raises(input_fn.CifarDataError,
                       match=r"train.tfrecords is missing; make it with: python -m cifar10.generate_cifar10_tfrecords"):
        input_fn.Cifar10DataSet(str(tmp_path), "train").make_batch(8)
    (tmp_path / "eval.tfrecords").write_bytes(b"")
    with pytest.raises(input_fn.CifarDataError, match="eval.tfrecords is empty"):
        input_fn.Cifar10DataSet(str(tmp_path), "eval").num_examples_per_epoch()
    with pytest.raises(ValueError, match="Invalid data subset 'test'"):
        input_fn.Cifar10DataSet(str(tmp_path), "test")


def write_records(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def good_records(count):
    return [generator._example(np.full(3072, i % 256, np.uint8), i % 10) for i in range(count)]


@pytest.mark.parametrize("bad, words", [
    (generator._example(np.zeros(100, np.uint8), 3), "record 7 has a 100-byte image and label 3"),
    (generator._example(np.zeros(3072, np.uint8), 50), "record 7 has a 3072-byte image and label 50"),
    (generator._example(np.zeros(3072, np.uint8), -1), "record 7 has a 3072-byte image and label -1"),
    (b"this is not an Example", "record 7 is not a CIFAR-10 Example with an image and a label"),
])
def test_every_record_is_checked_and_a_bad_one_is_named(tmp_path, bad, words):
    records = good_records(10)
    records[7] = bad
    write_records(tmp_path / "train.tfrecords", records)
    with pytest.raises(input_fn.CifarDataError, match=re.escape(f"{tmp_path / 'train.tfrecords'}: {words}")):
        input_fn.check_records(str(tmp_path / "train.tfrecords"))


def test_a_file_cut_inside_a_record_says_how_many_whole_records_it_holds(tmp_path):
    path = tmp_path / "eval.tfrecords"
    write_records(path, good_records(5000))
    raw = path.read_bytes()
    path.write_bytes(raw[:len(raw) - 1000])  # inside record 4999
    with pytest.raises(input_fn.CifarDataError, match=r"eval.tfrecords: corrupt TFRecord data after record 4999, cut "
                                                      r"short .*it holds 4999 whole records"):
        input_fn.check_records(str(path))


@pytest.mark.parametrize("cut", [1, 5, 11])  # bytes of the next record's 12-byte header left
def test_a_file_cut_inside_a_record_header_is_named_too(tmp_path, cut):
    """TensorFlow's reader ends such a file without an error: the framing's sizes must add up to the file's."""
    path = tmp_path / "train.tfrecords"
    write_records(path, good_records(10))
    whole = path.read_bytes()
    path.write_bytes(whole + whole[:cut])
    with pytest.raises(input_fn.CifarDataError, match=rf"train.tfrecords: {cut} bytes after record 10 are not a "
                                                      r"whole record: .*it holds 10 whole records"):
        input_fn.check_records(str(path))


def test_the_generators_manifest_catches_a_file_that_lost_records_or_changed(tmp_path):
    directory = str(tmp_path)
    cifar_files.make_tarball(directory, per_batch=20)
    generator.generate(directory)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["train.tfrecords"]["records"] == 80 and len(manifest["eval.tfrecords"]["sha256"]) == 64
    assert input_fn.preflight(directory) == {"train": 80, "validation": 20, "eval": 20}
    write_records(tmp_path / "validation.tfrecords", good_records(19))
    with pytest.raises(input_fn.CifarDataError,
                       match="validation.tfrecords holds 19 records but the generator wrote 20"):
        input_fn.preflight(directory)
    write_records(tmp_path / "validation.tfrecords", good_records(20))
    with pytest.raises(input_fn.CifarDataError, match="validation.tfrecords is not the file the generator wrote"):
        input_fn.preflight(directory)


def test_a_file_is_checked_once_per_process_until_it_changes(tmp_path, monkeypatch):
    """preflight and the train input_fn both ask for the train file's records: one read of 50,000."""
    path = tmp_path / "train.tfrecords"
    write_records(path, good_records(30))
    reads = []
    real = input_fn.scan_records
    monkeypatch.setattr(input_fn, "scan_records", lambda p: reads.append(p) or real(p))
    assert input_fn.check_records(str(path)) == input_fn.check_records(str(path)) == 30
    assert len(reads) == 1
    write_records(path, good_records(31))
    assert input_fn.check_records(str(path)) == 31 and len(reads) == 2
