"""Records what tf.estimator 2.15's TPUEstimator(use_tpu=False) wrote off a TPU: the TensorBoard tags of its
model dir with the steps each was written at, its log lines, and its export's MetaGraphs (tags, signatures).

Run from the project root with a tensorflow-cpu==2.15.1 virtualenv's Python (it brings tensorflow-estimator
2.15):
    python -m tests.data.tf215_tpu.record OUT_DIR 2> OUT_DIR/log.txt
writes OUT_DIR/tpu.json; tests/data/tf215_tpu/tpu.json is the one recorded on 2026-12-07, which
tests/tpu/test_estimator.py compares this project's TPUEstimator with.
"""

import glob
import json
import os
import shutil
import sys

import numpy as np
import tensorflow as tf

from tests.export_signatures import describe


def model_fn(features, labels, mode, params):
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, predictions={"pred": prediction})
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
    rng = np.random.RandomState(0)
    x = rng.rand(64, 3).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) + 0.5).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(params["batch_size"], drop_remainder=True)


def serving_input_receiver_fn():
    placeholder = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": placeholder}, {"x": placeholder})


def scalar_steps(model_dir):
    """{tag: [steps]} of the simple-value summaries in model_dir's event files."""
    steps = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.WhichOneof("value") == "simple_value":
                    steps.setdefault(value.tag, []).append(event.step)
    return steps


def main(base):
    shutil.rmtree(base, ignore_errors=True)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    model_dir = os.path.join(base, "model")
    config = tf.compat.v1.estimator.tpu.RunConfig(model_dir=model_dir, save_summary_steps=5, log_step_count_steps=5,
                                                  tf_random_seed=0)
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(use_tpu=False, model_fn=model_fn, config=config,
                                                        train_batch_size=8, eval_batch_size=8, predict_batch_size=8)
    estimator.train(input_fn, max_steps=20)
    export = estimator.export_saved_model(os.path.join(base, "export"), serving_input_receiver_fn)
    with open(os.path.join(base, "tpu.json"), "w") as out:
        json.dump({"scalar_steps": scalar_steps(model_dir), "export": describe(export)}, out, indent=1,
                  sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tf215_tpu")
