"""Records tf.estimator 2.15's "loss = ..., step = N" lines of a program whose train_op counts the global step
itself (BERT's optimizer: apply_gradients without global_step, then `global_step.assign(global_step + 1)`), and
of one that passes global_step to minimize: trained to step 20, then resumed by a new Estimator to step 40.

Run from the project root with a tensorflow-cpu==2.15.1 virtualenv's Python (it brings tensorflow-estimator
2.15), several times (TF1's fetch of the step raced with the write in the run's first step):
    python -m tests.data.tf215_logs.record_resume bert|plain MODEL_DIR 2> OUT
tests/data/tf215_logs/resume_steps.json holds the step labels of the runs recorded on 2026-12-07, which
tests/estimator/test_estimator_behaviour.py compares this project's with (the same program: `model_fn`).
"""

import shutil
import sys

import numpy as np
import tensorflow as tf


def model_fn_of(counts_itself, trainable_variables, optimizer):
    """The program's model_fn: TF1's trainable_variables and AdamOptimizer given (TF 2.15's or this project's)."""
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) + b - labels))
        if counts_itself:
            global_step = tf.compat.v1.train.get_or_create_global_step()
            variables = trainable_variables()
            train_op = optimizer(0.01).apply_gradients(zip(tf.gradients(loss, variables), variables))
            train_op = tf.group(train_op, [global_step.assign(global_step + 1)])
        else:
            train_op = optimizer(0.01).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return loss, train_op
    return model_fn


def input_fn():
    rng = np.random.RandomState(0)
    x = rng.rand(64, 3).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) + 0.5).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)


if __name__ == "__main__":
    variant, model_dir = sys.argv[1], sys.argv[2]
    shutil.rmtree(model_dir, ignore_errors=True)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    inner = model_fn_of(variant == "bert", tf.compat.v1.trainable_variables, tf.compat.v1.train.AdamOptimizer)

    def model_fn(features, labels, mode):
        loss, train_op = inner(features, labels, mode)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    for max_steps in (20, 40):
        config = tf.estimator.RunConfig(model_dir=model_dir, log_step_count_steps=10, save_checkpoints_steps=20,
                                        tf_random_seed=0)
        tf.estimator.Estimator(model_fn=model_fn, config=config).train(input_fn, max_steps=max_steps)
