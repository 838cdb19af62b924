"""Batch normalization as one fused kernel (FusedBatchNormV3).

keras.layers.BatchNormalization computes moments and the normalization as
separate element-wise ops, several passes over every activation; the fused
kernel does it in one (oneDNN on CPU, cuDNN on GPU). Same variables, same
moving-statistics rule (biased batch variance, as Keras), same checkpoint
names: a drop-in for 4-D inputs (float32, or float16 / bfloat16 activations
with float32 statistics under mixed precision); anything else falls back to
Keras. unbiased_moving_variance=True moves the variance by the kernel's
Bessel-corrected batch variance instead, as TF1's fused batch norm
(tf.compat.v1.layers.batch_normalization) did.
"""

import keras
import tensorflow as tf


class FusedBatchNormalization(keras.layers.BatchNormalization):
    """keras.layers.BatchNormalization with the fused kernel for NHWC / NCHW inputs."""

    def __init__(self, *args, unbiased_moving_variance=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.unbiased_moving_variance = unbiased_moving_variance

    def _fusable(self, inputs, mask):
        axis = self.axis if isinstance(self.axis, int) else None
        return (mask is None and not self.renorm and len(inputs.shape) == 4
                and inputs.dtype in (tf.float32, tf.float16, tf.bfloat16)
                and axis in (1, 3, -1) and self.scale and self.center)

    def call(self, inputs, training=None, mask=None):
        if not self._fusable(inputs, mask):
            return super().call(inputs, training=training, mask=mask)
        data_format = "NCHW" if self.axis == 1 else "NHWC"
        if training and self.trainable:
            empty = tf.constant([], tf.float32)
            outputs, mean, unbiased_variance, _, _, _ = tf.raw_ops.FusedBatchNormV3(
                x=inputs, scale=self.gamma, offset=self.beta, mean=empty, variance=empty,
                epsilon=self.epsilon, data_format=data_format, is_training=True)
            shape = tf.shape(inputs)
            count = tf.cast(tf.size(inputs) // shape[self.axis], tf.float32)
            variance = unbiased_variance if self.unbiased_moving_variance else unbiased_variance * (count - 1.0) / count
            self.moving_mean.assign(self.moving_mean * self.momentum + mean * (1.0 - self.momentum))
            self.moving_variance.assign(
                self.moving_variance * self.momentum + variance * (1.0 - self.momentum))
            return outputs
        outputs, _, _, _, _, _ = tf.raw_ops.FusedBatchNormV3(
            x=inputs, scale=self.gamma, offset=self.beta, mean=self.moving_mean, variance=self.moving_variance,
            epsilon=self.epsilon, data_format=data_format, is_training=False)
        return outputs

    def get_config(self):
        return {**super().get_config(), "unbiased_moving_variance": self.unbiased_moving_variance}
