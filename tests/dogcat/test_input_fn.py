"""dogcat.input_fn: both layouts, dirty files, stratified split, decoding, pipeline."""

import logging as py_logging
import os

import numpy as np
import pytest
import tensorflow as tf

from dogcat import input_fn
from tests import DATA, dogcat_files


@pytest.fixture
def dirty_train(tmp_path):
    rng = np.random.RandomState(0)
    train = tmp_path / "train"
    train.mkdir()
    for index in range(6):
        name = f"{('cat', 'dog')[index % 2]}.{index}.jpg"
        dogcat_files.write_jpeg(str(train / name), dogcat_files.photo(index % 2, rng))
    dogcat_files.write_png(str(train / "cat.10.jpg"), dogcat_files.photo(0, rng))  # a PNG named .jpg
    dogcat_files.write_jpeg(str(train / "dog.11.jpg"), dogcat_files.photo(1, rng)[..., :1])  # greyscale
    (train / "dog.12.jpg").write_bytes(b"")
    whole = (train / "cat.0.jpg").read_bytes()
    (train / "cat.13.jpg").write_bytes(whole[: len(whole) // 2])
    (train / "notes.txt").write_text("not an image")
    (train / "cat.14.jpg").write_text("plain text with a jpg name")
    return train


def test_kaggle_layout_skips_dirty_files_with_one_warning(dirty_train, caplog):
    with caplog.at_level(py_logging.WARNING):
        files = input_fn.list_train(str(dirty_train))
    names = [os.path.basename(p) for p in files.paths]
    assert names == ["cat.0.jpg", "cat.10.jpg", "cat.2.jpg", "cat.4.jpg", "dog.1.jpg", "dog.11.jpg",
                     "dog.3.jpg", "dog.5.jpg"]
    assert files.labels == [0, 0, 0, 0, 1, 1, 1, 1]
    assert len(files.skipped) == 4
    warnings = [r.getMessage() for r in caplog.records if "Left out" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].startswith("Left out 4 file(s)")
    for fragment in ("dog.12.jpg (zero bytes)", "cat.13.jpg (truncated JPEG", "notes.txt (name is neither",
                     "cat.14.jpg (not a JPEG, PNG, GIF or BMP image)"):
        assert fragment in warnings[0]


def test_class_folder_layout(tmp_path):
    rng = np.random.RandomState(1)
    for label, name in enumerate(("cat", "dog")):
        (tmp_path / name).mkdir()
        for index in range(3):
            dogcat_files.write_jpeg(str(tmp_path / name / f"img{index}.jpg"), dogcat_files.photo(label, rng))
    files = input_fn.list_train(str(tmp_path))
    assert files.labels == [0, 0, 0, 1, 1, 1]
    assert all(f"/{('cat', 'dog')[label]}/" in p for p, label in zip(files.paths, files.labels))


def test_empty_or_missing_train_folder_is_an_error(tmp_path):
    with pytest.raises(input_fn.DogCatDataError, match="the train folder does not exist"):
        input_fn.list_train(str(tmp_path / "train"))
    (tmp_path / "train").mkdir()
    with pytest.raises(input_fn.DogCatDataError, match="no usable cat or dog images"):
        input_fn.list_train(str(tmp_path / "train"))


def test_test_folder_keeps_every_id_in_numeric_order(tmp_path):
    rng = np.random.RandomState(2)
    for image_id in (10, 2, 1):
        dogcat_files.write_jpeg(str(tmp_path / f"{image_id}.jpg"), dogcat_files.photo(0, rng))
    (tmp_path / "7.jpg").write_bytes(b"")
    files = input_fn.list_test(str(tmp_path))
    assert files.ids == [1, 2, 7, 10]
    assert files.paths[2] is None and all(files.paths[i] for i in (0, 1, 3))


def test_stratified_split_is_disjoint_and_keeps_both_classes():
    labels = [0] * 90 + [1] * 10
    train, validation = input_fn.stratified_split(labels, 0.2, seed=0)
    assert not set(train) & set(validation) and len(train) + len(validation) == 100
    assert np.bincount(np.array(labels)[validation]).tolist() == [18, 2]
    tiny_train, tiny_validation = input_fn.stratified_split([0, 0, 1, 1], 0.2)
    assert sorted(np.array([0, 0, 1, 1])[tiny_validation]) == [0, 1]
    assert len(tiny_train) == 2


def test_cmyk_jpeg_decodes_to_rgb():
    """tests/data/cmyk_red_blue.jpg: 32x16, left half red, right half blue, stored as CMYK.

    Made once with Pillow (not a dependency): Image.new("CMYK", (32, 16)) with (0, 255, 255, 0) on the
    left and (255, 255, 0, 0) on the right, saved at quality 95.
    """
    path = os.path.join(DATA, "cmyk_red_blue.jpg")
    assert input_fn.image_problem(path) is None
    image = input_fn.decode_and_resize(tf.constant(path), 16).numpy().astype(int)
    np.testing.assert_allclose(image[4, 2], [255, 0, 0], atol=8)
    np.testing.assert_allclose(image[4, 13], [0, 0, 255], atol=8)


def test_large_jpegs_decode_at_reduced_scale_to_nearly_the_full_decode(tmp_path):
    small = np.random.RandomState(0).randint(0, 256, (6, 8, 3)).astype(np.float32)
    smooth = tf.cast(tf.image.resize(small[None], [240, 320], method="bicubic")[0], tf.uint8)
    path = str(tmp_path / "large.jpg")
    dogcat_files.write_jpeg(path, smooth)
    full = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    shapes = [input_fn.decode_jpeg_reduced(tf.io.read_file(path), size).shape for size in (30, 60, 64, 121, 200)]
    assert shapes == [(30, 40, 3), (60, 80, 3), (120, 160, 3), (240, 320, 3), (240, 320, 3)]
    for size in (64, 200):  # decoded at 1/2 scale, and at full scale
        expected = tf.image.resize(full, [size, size], antialias=True).numpy()
        got = input_fn.decode_and_resize(tf.constant(path), size).numpy().astype(np.float32)
        assert got.shape == (size, size, 3)
        assert np.abs(got - expected).mean() < 2.0


def test_pipeline_decodes_any_format_to_rgb_in_range(dirty_train):
    files = input_fn.list_train(str(dirty_train))
    batches = list(input_fn.dataset(files.paths, files.labels, 32, batch_size=3, training=False))
    images = np.concatenate([b[0].numpy() for b in batches])
    assert images.shape == (8, 32, 32, 3) and images.dtype == np.float32
    assert 0.0 <= images.min() and images.max() <= 1.0
    grey = images[files.paths.index(str(dirty_train / "dog.11.jpg"))]
    np.testing.assert_allclose(grey[..., 0], grey[..., 2])
    assert [len(b[1]) for b in batches] == [3, 3, 2]
    train = input_fn.dataset(files.paths, files.labels, 32, batch_size=4, training=True, augment_images=True,
                             cache=True, seed=3)
    augmented, labels = next(iter(train))
    assert augmented.shape == (4, 32, 32, 3) and labels.shape == (4,)
    again, _ = next(iter(input_fn.dataset(files.paths, files.labels, 32, batch_size=4, training=True,
                                          augment_images=True, cache=True, seed=3)))
    np.testing.assert_array_equal(again.numpy(), augmented.numpy())  # a seed repeats the augmentation
    keyed = next(iter(input_fn.dataset(files.paths, files.labels, 16, 8, training=False, keys=range(8))))[0]
    assert keyed["key"].numpy().tolist() == list(range(8)) and keyed["image"].shape == (8, 16, 16, 3)


def test_two_test_files_of_one_id_are_an_error_naming_both(tmp_path):
    rng = np.random.RandomState(0)
    (tmp_path / "test").mkdir()
    for name in ("15.jpg", "015.jpg", "16.png"):
        dogcat_files.write_jpeg(str(tmp_path / "test" / name), dogcat_files.photo(0, rng))
    with pytest.raises(input_fn.DogCatDataError,
                       match=r"test/015.jpg and .*test/15.jpg both have test id 15; the submission needs one row"):
        input_fn.list_test(str(tmp_path / "test"))


def test_a_train_folder_of_one_class_is_an_error_naming_the_counts(tmp_path):
    rng = np.random.RandomState(0)
    (tmp_path / "train").mkdir()
    for index in range(3):
        dogcat_files.write_jpeg(str(tmp_path / "train" / f"cat.{index}.jpg"), dogcat_files.photo(0, rng))
    with pytest.raises(input_fn.DogCatDataError, match="3 usable cat and 0 usable dog images; a classifier needs both"):
        input_fn.list_train(str(tmp_path / "train"))


def test_image_sizes_come_from_the_headers_and_huge_images_are_left_out_undecoded(tmp_path):
    rng = np.random.RandomState(0)
    pixels = dogcat_files.photo(1, rng, height=30, width=50)
    dogcat_files.write_jpeg(str(tmp_path / "a.jpg"), pixels)
    dogcat_files.write_png(str(tmp_path / "a.png"), pixels)
    for name in ("a.jpg", "a.png"):
        assert input_fn.image_size((tmp_path / name).read_bytes()[:65536]) == (50, 30)
    assert input_fn.image_size(b"GIF89a\x32\x00\x1e\x00" + bytes(10)) == (50, 30)
    # A 20000x20000 PNG: only its header is written (a decode would take 1.2 GB), never read past it.
    header = (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + (20000).to_bytes(4, "big")
              + (20000).to_bytes(4, "big") + bytes([8, 2, 0, 0, 0]) + bytes(4))
    (tmp_path / "huge.png").write_bytes(header + b"IEND")
    assert input_fn.image_problem(str(tmp_path / "huge.png")) == (
        "20000x20000 pixels, over the 40-megapixel limit (--max_image_megapixels)")
    assert input_fn.image_problem(str(tmp_path / "a.jpg"), max_megapixels=0.001) == (
        "50x30 pixels, over the 0.001-megapixel limit (--max_image_megapixels)")
    assert input_fn.image_problem(str(tmp_path / "a.jpg")) is None
