"""Small CIFAR-10 files in the exact official formats, made for tests."""

import io
import os
import pickle
import tarfile

import numpy as np

from cifar10 import generate_cifar10_tfrecords as generator

PALETTE = np.array([[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48],
                    [145, 30, 180], [70, 240, 240], [240, 50, 230], [210, 245, 60], [0, 0, 128]])


def batch_bytes(images, labels, name="batch"):
    """One pickled batch as the python release has it: byte keys, protocol 2."""
    batch = {b"batch_label": name.encode(), b"labels": [int(v) for v in labels],
             b"data": images, b"filenames": [f"{i}.png".encode() for i in range(len(labels))]}
    return pickle.dumps(batch, protocol=2)


def colour_images(labels, rng, noise=40):
    """Channel-major [N, 3072] uint8 images whose colour says the class."""
    base = PALETTE[labels][:, :, None, None] + rng.randint(-noise, noise + 1, (len(labels), 3, 32, 32))
    return np.clip(base, 0, 255).astype(np.uint8).reshape(len(labels), 3072)


def make_tarball(directory, per_batch=40, seed=0, learnable=False, overrides=None):
    """Writes DIR/cifar-10-python.tar.gz; returns {batch name: (images, labels)}.

    overrides: {batch name: raw bytes} to put in place of a pickled batch.
    """
    rng = np.random.RandomState(seed)
    batches, overrides = {}, overrides or {}
    path = os.path.join(directory, generator.CIFAR_FILENAME)
    with tarfile.open(path, "w:gz") as tar:
        for name in generator.TRAIN_BATCHES + [generator.TEST_BATCH]:
            labels = rng.randint(0, 10, per_batch)
            if learnable:
                images = colour_images(labels, rng)
            else:
                images = rng.randint(0, 256, (per_batch, 3072)).astype(np.uint8)
            batches[name] = (images, labels)
            data = overrides.get(name, batch_bytes(images, labels, name))
            info = tarfile.TarInfo(f"{generator.BATCH_DIR}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return batches
