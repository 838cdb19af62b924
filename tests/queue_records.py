"""TF 2.15's queue-runner reference (tests/data/tf215_tf1/queues.json): its two TFRecord files written out, and
the record reader every queue pipeline of the tests starts from."""

import base64
import json
import os

import tensorflow as tf

V1 = tf.compat.v1
REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "data", "tf215_tf1", "queues.json")))
CASES = REFERENCE["cases"]
FEATURES = {"id": V1.FixedLenFeature([], tf.int64), "x": V1.FixedLenFeature([], tf.float32)}


def write_record_files(folder):
    """The reference's two TFRecord files, written into `folder`; returns their paths."""
    paths = []
    for name in ("file_a", "file_b"):
        path = folder / f"{name}.tfrecord"
        path.write_bytes(base64.b64decode(REFERENCE["files"][name]["file_base64"]))
        paths.append(str(path))
    return paths


def records(paths, num_epochs):
    """[id, x] of each record of `paths`, num_epochs times, in order, from TF1's reader and producer."""
    reader = V1.TFRecordReader()
    _, serialized = reader.read(V1.train.string_input_producer(paths, num_epochs=num_epochs, shuffle=False))
    parsed = V1.parse_single_example(serialized, FEATURES)
    return [parsed["id"], parsed["x"]]
