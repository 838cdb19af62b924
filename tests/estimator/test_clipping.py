"""clip_gradients_by_norm: the averaged gradients scaled to the global norm, for Keras and TF1 optimizers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(3)
X = RNG.randn(8, 3).astype(np.float32)
Y = RNG.randn(8, 1).astype(np.float32)


@pytest.mark.parametrize("tf1", [False, True])
def test_gradients_clipped_by_global_norm_after_the_towers_average_them(tmp_path, tf1):
    """One gradient-descent step at rate 1 from zero weights moves them by -g * 0.05 / |g| (|g| > 0.05)."""
    def clipped_fn(features, labels, mode):
        predictions = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="linear")(features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        if tf1:
            train_op = common.clip_gradients_by_norm(tf1_train.GradientDescentOptimizer(1.0), 0.05).minimize(loss)
            return common.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)
        optimizer = common.get_optimizer(lambda: common.clip_gradients_by_norm(keras.optimizers.SGD(1.0), 0.05))
        return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions=predictions)

    est = common.Estimator(clipped_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(lambda: tf.data.Dataset.from_tensors((X, Y)).repeat(), steps=1)
    gradient = -2 * X.T.astype(np.float64) @ Y / len(X)
    assert np.linalg.norm(gradient) > 0.05
    np.testing.assert_allclose(est.get_variable_value("model_fn/linear/kernel"),
                               -gradient * 0.05 / np.linalg.norm(gradient), rtol=1e-5)
    with pytest.raises(ValueError, match="the optimizer already clips"):
        common.clip_gradients_by_norm(keras.optimizers.SGD(1.0, clipnorm=1.0), 0.05)
