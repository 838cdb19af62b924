"""tf.compat.v1.layers inside model_fn, which Keras 3 no longer offers.

Each function builds the Keras layer TF1's built (same defaults: TF1's batch
norm momentum 0.99 and epsilon 0.001, glorot-uniform kernels; on 4-D inputs
TF1's fused kernel, whose moving variance takes the Bessel-corrected batch
variance) and calls it.
Built on every call of model_fn, its variables are created by the first
call and served to every later one (common.served_variables), so towers and
modes share them as variable scopes made them share; batch-norm statistics
update in training without UPDATE_OPS. Sharing one layer's weights between
two uses within a call (`reuse=True`, or a variable_scope's reuse) is
refused: build the Keras layer once and call it twice. Variable scopes do
not name the variables (their layers' Keras names do). Weight regularizers
add their losses to what common.tf1.losses.get_regularization_loss() sums,
as TF1's did to the REGULARIZATION_LOSSES collection.
"""

import keras
import tensorflow as tf

from common.layers.fused_batch_norm import FusedBatchNormalization
from common.variables import registry


class BatchNormalization(FusedBatchNormalization):
    """TF1's batch norm layer, named as TF1 named it ("batch_normalization", "batch_normalization_1", ...)."""


def _check(name, reuse, activity_regularizer=None):
    scope = tf.compat.v1.get_variable_scope()
    scope_reuse = scope.reuse if scope.name else False  # (the root scope's flag depends on what ran first)
    if reuse or scope_reuse:
        how = "reuse=True" if reuse else f"a variable_scope with reuse={scope_reuse!r}"
        raise NotImplementedError(
            f"tf1.layers (layer {name!r}): {how} within one call of model_fn is not supported (the layer "
            "would get weights of its own, not share them); build the Keras layer once "
            "(keras.layers.Dense(...)) and call it on both inputs")
    if activity_regularizer is not None:
        raise NotImplementedError(
            f"tf1.layers (layer {name!r}): activity_regularizer is not supported; build the Keras layer with "
            "activity_regularizer=... and add sum(layer.losses) to the loss")


def _called(layer, inputs, **kwargs):
    """layer(inputs), its weights' regularization losses filed for common.tf1.losses."""
    outputs = layer(inputs, **kwargs)
    if layer.losses and registry.running_model_fn():
        registry.active_registry().regularization_losses.extend(layer.losses)
    return outputs


def _initializer(value, default):
    return default if value is None else value


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer="zeros",
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    _check(name, reuse, activity_regularizer)
    return _called(keras.layers.Dense(
        units, activation=activation, use_bias=use_bias,
        kernel_initializer=_initializer(kernel_initializer, "glorot_uniform"),
        bias_initializer=_initializer(bias_initializer, "zeros"), kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint, trainable=trainable, name=name), inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer="zeros",
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    _check(name, reuse, activity_regularizer)
    return _called(keras.layers.Conv2D(
        filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
        dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
        kernel_initializer=_initializer(kernel_initializer, "glorot_uniform"),
        bias_initializer=_initializer(bias_initializer, "zeros"), kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint, trainable=trainable, name=name), inputs)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                        beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                        moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    _check(name, reuse)
    if renorm or virtual_batch_size or adjustment:
        raise NotImplementedError(f"tf1.layers.batch_normalization (layer {name!r}): renorm, virtual_batch_size "
                                  "and adjustment are not supported")
    return _called(BatchNormalization(
        unbiased_moving_variance=True, axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer, moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint, trainable=trainable, name=name), inputs, training=training)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    return keras.layers.Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return keras.layers.MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return keras.layers.AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format,
                                         name=name)(inputs)


def flatten(inputs, name=None, data_format="channels_last"):
    return keras.layers.Flatten(data_format=data_format, name=name)(inputs)
