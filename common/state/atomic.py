"""Files that appear whole or not at all: write to a temporary name, then rename.

A crash or a kill mid-write leaves at most a `.tmp-*` file beside the
target, never a half-written file under the final name.
"""

import contextlib
import os
import uuid

import tensorflow as tf


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path in the same directory; renames it to `path` on success."""
    directory = os.path.dirname(path) or "."
    tf.io.gfile.makedirs(directory)
    temp = os.path.join(directory, f".tmp-{uuid.uuid4().hex[:8]}-{os.path.basename(path)}")
    try:
        yield temp
        tf.io.gfile.rename(temp, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(temp):
            tf.io.gfile.remove(temp)


def write_bytes(path, data):
    with atomic_path(path) as temp:
        with tf.io.gfile.GFile(temp, "wb") as f:
            f.write(data)


def write_text(path, text):
    write_bytes(path, text.encode("utf-8"))
