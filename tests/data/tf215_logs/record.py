"""Records tf.estimator 2.15's log lines in a plain script (no absl app) that asks TensorFlow for INFO: a
DNNClassifier constructed, trained 20 steps (log_step_count_steps=5) and evaluated.

Run from the project root with a tensorflow-cpu==2.15.1 virtualenv's Python (it brings tensorflow-estimator
2.15):
    python -m tests.data.tf215_logs.record MODEL_DIR 2> OUT
tests/data/tf215_logs/dnn_classifier.log holds the "INFO:tensorflow:" lines of the run recorded on
2026-12-07 (the model dir written as MODEL_DIR), which tests/estimator/test_estimator_behaviour.py compares
this project's lines with. The same scenario runs there on this project (`scenario`).
"""

import shutil
import sys

import numpy as np
import tensorflow as tf


def input_fn_of(repeat):
    def input_fn():
        rng = np.random.RandomState(0)
        x = rng.rand(64, 3).astype(np.float32)
        y = (x.sum(axis=1, keepdims=True) > 1.5).astype(np.int64)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return (dataset.repeat() if repeat else dataset).batch(8)
    return input_fn


def scenario(classifier, run_config, model_dir):
    """classifier: DNNClassifier's class; run_config: RunConfig's."""
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    estimator = classifier(hidden_units=[4], feature_columns=columns,
                           config=run_config(model_dir=model_dir, log_step_count_steps=5, tf_random_seed=0))
    estimator.train(input_fn_of(True), steps=20)
    estimator.evaluate(input_fn_of(False))


if __name__ == "__main__":
    shutil.rmtree(sys.argv[1], ignore_errors=True)
    scenario(tf.estimator.DNNClassifier, tf.estimator.RunConfig, sys.argv[1])
