"""Kaggle-style dogs-vs-cats folders made of generated images (no PIL needed)."""

import os

import numpy as np
import tensorflow as tf


def photo(label, rng, height=None, width=None):
    """An RGB uint8 image whose colour tells the class: cats reddish, dogs bluish."""
    height = height or rng.randint(40, 90)
    width = width or rng.randint(40, 90)
    base = np.array([200, 60, 60]) if label == 0 else np.array([60, 60, 200])
    pixels = base + rng.randint(-50, 51, (height, width, 3))
    return np.clip(pixels, 0, 255).astype(np.uint8)


def write_jpeg(path, pixels):
    tf.io.write_file(path, tf.io.encode_jpeg(pixels))


def write_png(path, pixels):
    tf.io.write_file(path, tf.io.encode_png(pixels))


def make_kaggle(directory, num_train=40, num_test=10, seed=0):
    """DIR/train/{cat,dog}.N.jpg and DIR/test/N.jpg; returns the test labels by id."""
    rng = np.random.RandomState(seed)
    os.makedirs(os.path.join(directory, "train"), exist_ok=True)
    os.makedirs(os.path.join(directory, "test"), exist_ok=True)
    for index in range(num_train):
        label = index % 2
        write_jpeg(os.path.join(directory, "train", f"{('cat', 'dog')[label]}.{index}.jpg"), photo(label, rng))
    test_labels = {}
    for image_id in range(1, num_test + 1):
        label = rng.randint(2)
        test_labels[image_id] = label
        write_jpeg(os.path.join(directory, "test", f"{image_id}.jpg"), photo(label, rng))
    return test_labels
