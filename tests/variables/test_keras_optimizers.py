"""A Keras optimizer model_fn makes itself (TF 2.x estimator code: GradientTape and apply_gradients in
model_fn): its update waits for every tower's gradients, then is done once with their average."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from tests import models

X = np.random.RandomState(5).randn(16, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


def tape_fn(features, labels, mode):
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")
    optimizer = keras.optimizers.Adam(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(layer(features) - labels))
    gradients = tape.gradient(loss, layer.trainable_variables)
    train_op = optimizer.apply_gradients(zip(gradients, layer.trainable_variables))
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("num_towers", [1, 2])
def test_the_update_is_done_once_a_step_with_the_towers_average(tmp_path, num_towers):
    est = common.Estimator(tape_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(num_towers)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=4)
    values = est.variable_values()
    assert sorted(values) == ["global_step", "model_fn/adam/iteration", "model_fn/adam/learning_rate",  # one slot each
                              "model_fn/adam/model_fn_linear_kernel_momentum",
                              "model_fn/adam/model_fn_linear_kernel_velocity", "model_fn/linear/kernel"]
    np.testing.assert_allclose(values["model_fn/linear/kernel"], models.linear_adam(X, Y, 4), rtol=1e-5)
    assert values["global_step"] == 4 and values["model_fn/adam/iteration"] == 4  # its state checkpointed too
