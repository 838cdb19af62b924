"""A small sample of the real MNIST, written as the gz IDX files the mnist job reads."""

import os

import numpy as np

from common.state import idx_files
from mnist import input_fn


def sample_files(directory):
    """512 real training and 200 real test images, as gz IDX files in `directory`; returns it."""
    os.makedirs(directory, exist_ok=True)
    data = input_fn.load()
    idx_files.write_idx(os.path.join(directory, "train-images-idx3-ubyte.gz"), data.train_images[:512])
    idx_files.write_idx(os.path.join(directory, "train-labels-idx1-ubyte.gz"), data.train_labels[:512].astype(np.uint8))
    idx_files.write_idx(os.path.join(directory, "t10k-images-idx3-ubyte.gz"), data.test_images[:200])
    idx_files.write_idx(os.path.join(directory, "t10k-labels-idx1-ubyte.gz"), data.test_labels[:200].astype(np.uint8))
    return directory
