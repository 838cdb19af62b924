"""FusedBatchNormalization computes what keras.layers.BatchNormalization computes."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from common.layers.fused_batch_norm import FusedBatchNormalization


@pytest.mark.parametrize("training", [True, False])
def test_same_outputs_gradients_and_moving_statistics(training):
    rng = np.random.RandomState(0)
    x = tf.constant(rng.randn(8, 5, 5, 6).astype(np.float32) * 3 + 1)
    reference, fused = keras.layers.BatchNormalization(momentum=0.9), FusedBatchNormalization(momentum=0.9)
    for layer in (reference, fused):
        layer.build(x.shape)
    for source, target in zip(reference.weights, fused.weights):
        value = rng.uniform(0.5, 1.5, source.shape).astype(np.float32)
        source.assign(value)
        target.assign(value)
    results = []
    for layer in (reference, fused):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=training)
            loss = tf.reduce_sum(y * tf.range(6, dtype=tf.float32))
        results.append((y, tape.gradient(loss, [x, layer.gamma.value, layer.beta.value]),
                        layer.moving_mean.numpy(), layer.moving_variance.numpy()))
    (y_ref, g_ref, mean_ref, var_ref), (y, g, mean, var) = results
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    for got, want in zip(g, g_ref):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, var_ref, rtol=1e-5, atol=1e-6)


def test_falls_back_to_keras_for_other_ranks():
    x = tf.random.normal([4, 3])
    layer = FusedBatchNormalization()
    y = layer(x, training=True)
    assert y.shape == (4, 3)


def test_mixed_bfloat16_activations_keep_float32_statistics():
    x = tf.random.normal([4, 6, 6, 3], seed=1) * 2
    reference = keras.layers.BatchNormalization(dtype="mixed_bfloat16")
    fused = FusedBatchNormalization(dtype="mixed_bfloat16")
    y_ref, y = reference(x, training=True), fused(x, training=True)
    assert y.dtype == tf.bfloat16 and fused.moving_mean.dtype == "float32"
    np.testing.assert_allclose(tf.cast(y, tf.float32), tf.cast(y_ref, tf.float32), atol=0.05)
    np.testing.assert_allclose(fused.moving_mean.numpy(), reference.moving_mean.numpy(), rtol=1e-2, atol=1e-3)
