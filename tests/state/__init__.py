"""Tests of common.state, and the small named model they share."""

import numpy as np
import tensorflow as tf

from common.state import checkpoints
from common.state.checkpoint_store import CheckpointStore


def model_variables(scale=1.0, kernel_shape=(2, 3)):
    """A tiny model's named variables, as the Estimator hands them to the store."""
    return {
        checkpoints.GLOBAL_STEP: tf.Variable(0, dtype=tf.int64),
        "net/dense/kernel": tf.Variable(np.full(kernel_shape, scale, np.float32)),
        "net/dense/bias": tf.Variable(np.full([kernel_shape[-1]], 2 * scale, np.float32)),
        "optimizer/momentum": tf.Variable(np.full(kernel_shape, -scale, np.float32)),
    }


MODEL_NAMES = ["net/dense/kernel", "net/dense/bias"]


def save(directory, step, variables, **store_args):
    variables[checkpoints.GLOBAL_STEP].assign(step)
    return CheckpointStore(str(directory), **store_args).save(step, variables)


def values(variables):
    return {name: variable.numpy().copy() for name, variable in variables.items()}
