"""Records what tf.estimator 2.15 exports for premade estimators: the tags, signature keys, method names,
inputs and outputs of each MetaGraph, for a parsing and a raw receiver.

Run from the project root with a tensorflow-cpu==2.15.1 virtualenv's Python (it brings tensorflow-estimator
2.15):
    python -m tests.data.tf215_exports.record OUT_DIR
writes OUT_DIR/exports.json; tests/data/tf215_exports/exports.json is the one recorded on 2026-12-07, which
tests/canned/test_estimators.py compares this project's exports of the same estimators with.
"""

import json
import os
import shutil
import sys

import numpy as np
import tensorflow as tf

from tests.export_signatures import describe

COLUMNS = [tf.feature_column.numeric_column("x", shape=[3])]


def input_fn_of(label_dimension, classes=None):
    def input_fn():
        rng = np.random.RandomState(0)
        x = rng.rand(32, 3).astype(np.float32)
        y = (rng.randint(0, classes, size=(32, 1)).astype(np.int64) if classes
             else rng.rand(32, label_dimension).astype(np.float32))
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)
    return input_fn


def exports_of(base, name, estimator, input_fn):
    """{receiver kind: describe(export)} of the estimator trained 5 steps."""
    estimator.train(input_fn, steps=5)
    parsing = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(COLUMNS))
    with tf.Graph().as_default():  # (tf.compat.v1.placeholder raises eagerly; the receiver reads its spec)
        placeholder = tf.compat.v1.placeholder(tf.float32, [None, 3])
    raw = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": placeholder})
    return {kind: describe(estimator.export_saved_model(os.path.join(base, name, f"export_{kind}"), receiver))
            for kind, receiver in (("parsing", parsing), ("raw", raw))}


def main(base):
    shutil.rmtree(base, ignore_errors=True)
    config = tf.estimator.RunConfig(tf_random_seed=0)
    recorded = {
        "DNNRegressor_label_dimension_2": exports_of(base, "reg2", tf.estimator.DNNRegressor(
            hidden_units=[4], feature_columns=COLUMNS, label_dimension=2, model_dir=f"{base}/reg2/model",
            config=config), input_fn_of(2)),
        "DNNRegressor_label_dimension_1": exports_of(base, "reg1", tf.estimator.DNNRegressor(
            hidden_units=[4], feature_columns=COLUMNS, label_dimension=1, model_dir=f"{base}/reg1/model",
            config=config), input_fn_of(1)),
        "DNNClassifier_n_classes_3": exports_of(base, "cls3", tf.estimator.DNNClassifier(
            hidden_units=[4], feature_columns=COLUMNS, n_classes=3, model_dir=f"{base}/cls3/model",
            config=config), input_fn_of(1, classes=3)),
    }
    with open(os.path.join(base, "exports.json"), "w") as out:
        json.dump(recorded, out, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tf215_exports")
