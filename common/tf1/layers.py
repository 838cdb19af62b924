"""tf.compat.v1.layers inside model_fn, which Keras 3 no longer offers.

Each layer is TF1's: its variables are made with tf.compat.v1.get_variable
in a variable scope named as TF1 named it ("dense", "dense_1", or the name
given; inside the caller's scopes, so BERT's query layer is
"bert/encoder/layer_0/attention/self/query/kernel"), with TF1's defaults
(glorot-uniform kernels, zero biases, batch norm momentum 0.99 and epsilon
0.001). So they share as TF1's did: `reuse=True`, a reusing variable scope,
or calling one layer object twice; a later call of model_fn is served the
same variables by name, and checkpoints hold TF1's names. Regularizers add to
REGULARIZATION_LOSSES, which tf.compat.v1.losses.get_regularization_loss() sums.

Batch norm in training moves its statistics as TF1's did (on 4-D inputs the
fused kernel's Bessel-corrected batch variance); the new values are handed
to the framework (common.variables.registry.assign_after_step), which
averages them over the towers and assigns them after the step, and the op
filed under UPDATE_OPS stands for that.
"""

import contextlib
import re

import keras
import tensorflow as tf

from common.internals import keras_internals
from common.variables import registry

GraphKeys = tf.compat.v1.GraphKeys


def _format(data_format, rank):
    """TF's data format string for a Keras-style one ("channels_last" / "channels_first")."""
    last = data_format in (None, "channels_last")
    return {1: "NWC" if last else "NCW", 2: "NHWC" if last else "NCHW", 3: "NDHWC" if last else "NCDHW"}[rank]


def _activated(outputs, activation):
    return outputs if activation is None else keras.activations.get(activation)(outputs)


class Layer:
    """TF1's base layer: variables made on the first call under the layer's variable scope, shared on later calls."""

    base_name = "layer"

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None, _reuse=None, _scope=None,
                 **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")
        self.trainable = trainable
        self.name = name
        self.dtype = None if dtype is None else tf.as_dtype(dtype)
        self.activity_regularizer = activity_regularizer
        self._reuse = _reuse
        self._scope = None
        self._op_scope = None  # the name scope a named layer's ops go in (TF1: where its variable scope opened)
        if isinstance(_scope, str) and _scope:  # (TF1 took a named scope where the layer was made, under its scopes)
            with tf.compat.v1.variable_scope(_scope, reuse=_reuse) as _scope:
                self._op_scope = _scope.original_name_scope
        self._given_scope = _scope  # a VariableScope to make them in (contrib's layers', a named one), or None
        self.built = False
        self._weights = []  # (variable, trainable), in the order made

    @property
    def trainable_weights(self):
        return [v for v, trainable in self._weights if trainable]

    @property
    def non_trainable_weights(self):
        return [v for v, trainable in self._weights if not trainable]

    @property
    def weights(self):
        """As TF1's Keras-based layers listed them: the trainable ones first."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True,
                   constraint=None, collections=None):
        """A variable of the layer's scope; initializers and regularizers may be Keras identifiers ("zeros"),
        as TF1's Keras-based layers took them."""
        trainable = trainable and self.trainable
        variable = tf.compat.v1.get_variable(
            name, shape, dtype or self.dtype or tf.float32,
            initializer=keras.initializers.get(initializer) if isinstance(initializer, (str, dict)) else initializer,
            regularizer=keras.regularizers.get(regularizer) if isinstance(regularizer, (str, dict)) else regularizer,
            trainable=trainable, constraint=constraint, collections=collections)
        self._weights.append((variable, trainable))
        return variable

    def _add_kernel_and_bias(self, kernel_shape, units):
        """A dense or convolution layer's "kernel" and (with use_bias) "bias", from its (initializer,
        regularizer, constraint) triples self._kernel and self._bias."""
        initializer, regularizer, constraint = self._kernel
        self.kernel = self.add_weight("kernel", kernel_shape, initializer=initializer, regularizer=regularizer,
                                      constraint=constraint)
        self.bias = None
        if self.use_bias:
            initializer, regularizer, constraint = self._bias
            self.bias = self.add_weight("bias", [units], initializer=initializer, regularizer=regularizer,
                                        constraint=constraint)

    @classmethod
    def _default_name(cls):
        """An unnamed layer's scope: its class's base_name, or a program's subclass's name in snake case, as TF1's
        Keras-based layers named themselves (EfficientNet's TpuBatchNormalization: tpu_batch_normalization)."""
        return cls.base_name if "base_name" in vars(cls) else re.sub(
            "([a-z])([A-Z])", r"\1_\2", re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", cls.__name__)).lower()

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        raise NotImplementedError

    def apply(self, inputs, *args, **kwargs):
        """TF1's Layer.apply: the layer called."""
        return self(inputs, *args, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        with tf.name_scope(self._op_scope) if self._op_scope else contextlib.nullcontext():
            return self._called(inputs, *args, **kwargs)

    def _called(self, inputs, *args, **kwargs):
        if self.dtype is None and hasattr(inputs, "dtype") and tf.as_dtype(inputs.dtype).is_floating:
            self.dtype = tf.as_dtype(inputs.dtype)
        if self._scope is None:
            if isinstance(self._given_scope, tf.compat.v1.VariableScope):
                opened = tf.compat.v1.variable_scope(self._given_scope, reuse=self._reuse, auxiliary_name_scope=False)
            elif self._reuse:  # (one to share: exactly that name)
                opened = tf.compat.v1.variable_scope(self.name or self._default_name(), reuse=self._reuse)
            else:  # (TF1: a layer object's name is a default, numbered as it recurs: "fc", "fc_1")
                opened = tf.compat.v1.variable_scope(None, default_name=self.name or self._default_name())
            with opened as scope:
                self.build(tf.TensorShape(inputs.shape))
                self._scope, self.built = scope, True  # (after its variables: a build that failed is tried again)
                outputs = self.call(inputs, *args, **kwargs)
        else:
            with tf.compat.v1.variable_scope(self._scope, reuse=True, auxiliary_name_scope=False):
                outputs = self.call(inputs, *args, **kwargs)
        if self.activity_regularizer is not None:
            tf.compat.v1.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, self.activity_regularizer(outputs))
        return outputs


class Dense(Layer):
    base_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=tf.compat.v1.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, use_bias
        self._kernel = (kernel_initializer, kernel_regularizer, kernel_constraint)
        self._bias = (bias_initializer, bias_regularizer, bias_constraint)

    def build(self, input_shape):
        if input_shape[-1] is None:
            raise ValueError(f"The last dimension of the inputs to Dense {self.name or ''} should be defined")
        self._add_kernel_and_bias([int(input_shape[-1]), self.units], self.units)

    def call(self, inputs):
        inputs = tf.cast(inputs, self.kernel.dtype)
        if inputs.shape.rank is not None and inputs.shape.rank > 2:
            outputs = tf.tensordot(inputs, self.kernel, [[inputs.shape.rank - 1], [0]])
        else:
            outputs = tf.matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return _activated(outputs, self.activation)


class _Conv(Layer):
    rank = 2
    transpose = False

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=tf.compat.v1.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters, self.activation, self.use_bias = int(filters), activation, use_bias
        self.kernel_size, self.strides = self._tuple(kernel_size), self._tuple(strides)
        self.dilation_rate, self.padding = self._tuple(dilation_rate), padding.upper()
        self.data_format = _format(data_format, self.rank)
        self._kernel = (kernel_initializer, kernel_regularizer, kernel_constraint)
        self._bias = (bias_initializer, bias_regularizer, bias_constraint)

    def _tuple(self, value):
        return tuple(value) if isinstance(value, (list, tuple)) else (int(value),) * self.rank

    def build(self, input_shape):
        channels = int(input_shape[1 if self.data_format.startswith("NC") else -1])
        shape = (self.kernel_size + (self.filters, channels) if self.transpose
                 else self.kernel_size + (channels, self.filters))
        self._add_kernel_and_bias(list(shape), self.filters)

    def _convolve(self, inputs):
        return tf.nn.convolution(inputs, self.kernel, strides=self.strides, padding=self.padding,
                                 dilations=self.dilation_rate, data_format=self.data_format)

    def call(self, inputs):
        outputs = self._convolve(tf.cast(inputs, self.kernel.dtype))
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias,
                                     data_format="NC..." if self.data_format.startswith("NC") else None)
        return _activated(outputs, self.activation)


class Conv1D(_Conv):
    base_name, rank = "conv1d", 1


class Conv2D(_Conv):
    base_name, rank = "conv2d", 2


class Conv3D(_Conv):
    base_name, rank = "conv3d", 3


class Conv2DTranspose(_Conv):
    base_name, rank, transpose = "conv2d_transpose", 2, True

    def _convolve(self, inputs):
        if self.dilation_rate != (1, 1):
            raise NotImplementedError("conv2d_transpose with dilation_rate is not supported")
        channels_first = self.data_format.startswith("NC")
        shape = tf.shape(inputs)
        sizes = [shape[2], shape[3]] if channels_first else [shape[1], shape[2]]
        out = []
        for size, kernel, stride in zip(sizes, self.kernel_size, self.strides):
            out.append(size * stride if self.padding == "SAME" else size * stride + max(kernel - stride, 0))
        output_shape = tf.stack([shape[0], self.filters] + out if channels_first else [shape[0]] + out + [self.filters])
        return tf.nn.conv2d_transpose(inputs, self.kernel, output_shape, strides=self.strides, padding=self.padding,
                                      data_format=self.data_format)


class BatchNormalization(Layer):
    """TF1's batch norm (see the module for how its statistics move)."""

    base_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=tf.compat.v1.zeros_initializer(), gamma_initializer=tf.compat.v1.ones_initializer(),
                 moving_mean_initializer=tf.compat.v1.zeros_initializer(),
                 moving_variance_initializer=tf.compat.v1.ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, renorm=False,
                 renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size or adjustment:
            raise NotImplementedError(f"tf1.layers.batch_normalization (layer {name!r}): renorm, virtual_batch_size "
                                      "and adjustment are not supported")
        self.axis, self.momentum, self.epsilon, self.center, self.scale = axis, momentum, epsilon, center, scale
        self._initializers = (beta_initializer, gamma_initializer, moving_mean_initializer,
                              moving_variance_initializer)
        self._regularizers = (beta_regularizer, gamma_regularizer)
        self._constraints = (beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = input_shape.rank
        self._axis = self.axis % rank
        size = [int(input_shape[self._axis])]
        beta_init, gamma_init, mean_init, variance_init = self._initializers
        self.gamma = self.add_weight("gamma", size, tf.float32, gamma_init, self._regularizers[1],
                                     constraint=self._constraints[1]) if self.scale else None
        self.beta = self.add_weight("beta", size, tf.float32, beta_init, self._regularizers[0],
                                    constraint=self._constraints[0]) if self.center else None
        moving = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES]
        self.moving_mean = self.add_weight("moving_mean", size, tf.float32, mean_init, trainable=False,
                                           collections=moving)
        self.moving_variance = self.add_weight("moving_variance", size, tf.float32, variance_init, trainable=False,
                                               collections=moving)

    def _fusable(self, inputs):
        return inputs.shape.rank == 4 and self._axis in (1, 3)

    def call(self, inputs, training=False):
        static = tf.get_static_value(training) if isinstance(training, tf.Tensor) else training
        if static is None:
            raise NotImplementedError(
                f"tf1.layers.batch_normalization (layer {self._scope.name!r}): training must be known when model_fn "
                "is traced (a Python bool such as mode == ModeKeys.TRAIN), not a tensor")
        return self._normalize(inputs, bool(static))

    def _offsets(self, size, dtype):
        gamma = tf.ones(size, dtype) if self.gamma is None else tf.cast(self.gamma, dtype)
        beta = tf.zeros(size, dtype) if self.beta is None else tf.cast(self.beta, dtype)
        return gamma, beta

    def _normalize(self, inputs, training):
        size = self.moving_mean.shape
        if self._fusable(inputs):
            gamma, beta = self._offsets(size, tf.float32)
            data_format = "NCHW" if self._axis == 1 else "NHWC"
            if not training:
                outputs, *_ = tf.raw_ops.FusedBatchNormV3(
                    x=inputs, scale=gamma, offset=beta, mean=self.moving_mean, variance=self.moving_variance,
                    epsilon=self.epsilon, data_format=data_format, is_training=False)
                return outputs
            empty = tf.constant([], tf.float32)
            outputs, mean, variance, *_ = tf.raw_ops.FusedBatchNormV3(
                x=inputs, scale=gamma, offset=beta, mean=empty, variance=empty, epsilon=self.epsilon,
                data_format=data_format, is_training=True)
        else:
            axes = [i for i in range(inputs.shape.rank) if i != self._axis]
            shape = [1] * inputs.shape.rank
            shape[self._axis] = size[0]
            gamma, beta = self._offsets(size, inputs.dtype)
            if training:
                mean, variance = tf.nn.moments(inputs, axes)
            else:
                mean, variance = self.moving_mean, self.moving_variance
            outputs = tf.nn.batch_normalization(
                inputs, tf.reshape(tf.cast(mean, inputs.dtype), shape), tf.reshape(tf.cast(variance, inputs.dtype),
                                                                                   shape),
                tf.reshape(beta, shape), tf.reshape(gamma, shape), self.epsilon)
            if not training:
                return outputs
        if keras_internals.in_symbolic_call():  # (a Keras model's shape trace, in a graph it drops: its real call,
            return outputs  # which follows, files the update)
        for variable, batch_value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            decayed = variable - (variable - tf.cast(batch_value, variable.dtype)) * (1.0 - self.momentum)
            tf.compat.v1.add_to_collection(GraphKeys.UPDATE_OPS, registry.assign_after_step(variable, decayed))
        return outputs


class Dropout(Layer):
    base_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs, training=False):
        def dropped():
            return tf.nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)

        static = tf.get_static_value(training) if isinstance(training, tf.Tensor) else training
        if static is None:
            return tf.cond(tf.cast(training, tf.bool), dropped, lambda: tf.identity(inputs))
        return dropped() if static else tf.identity(inputs)


class Flatten(Layer):
    base_name = "flatten"

    def __init__(self, data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.shape.rank and inputs.shape.rank > 2:
            inputs = tf.transpose(inputs, [0] + list(range(2, inputs.shape.rank)) + [1])
        inner = inputs.shape[1:]
        size = inner.num_elements() if inner.is_fully_defined() else -1
        return tf.reshape(inputs, [tf.shape(inputs)[0], size])


class _Pooling(Layer):
    rank, pool = 2, "MAX"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size, self.strides = self._tuple(pool_size), self._tuple(strides)
        self.padding = padding.upper()
        self.data_format = _format(data_format, self.rank)

    def _tuple(self, value):
        return tuple(value) if isinstance(value, (list, tuple)) else (int(value),) * self.rank

    def call(self, inputs):
        return tf.nn.pool(inputs, self.pool_size, self.pool, strides=self.strides, padding=self.padding,
                          data_format=self.data_format)


def _pooling(name, base_name, rank, pool):
    return type(name, (_Pooling,), {"base_name": base_name, "rank": rank, "pool": pool})


MaxPooling1D, MaxPooling2D, MaxPooling3D = (_pooling(f"MaxPooling{r}D", f"max_pooling{r}d", r, "MAX")
                                            for r in (1, 2, 3))
AveragePooling1D, AveragePooling2D, AveragePooling3D = (
    _pooling(f"AveragePooling{r}D", f"average_pooling{r}d", r, "AVG") for r in (1, 2, 3))


def _function(layer_class, layer_arguments):
    """tf.compat.v1.layers' function form: the layer made and called once; `reuse` shares a named layer's variables."""
    def layer_function(inputs, *args, training=None, reuse=None, **kwargs):
        layer = layer_class(*args, _reuse=reuse, _scope=kwargs.get("name"), **kwargs)
        return layer(inputs) if training is None or not layer_arguments else layer(inputs, training=training)
    layer_function.__name__ = layer_class.base_name
    layer_function.__doc__ = f"tf.compat.v1.layers.{layer_class.base_name}: {layer_class.__name__}(...)(inputs)."
    return layer_function


dense = _function(Dense, False)
conv1d, conv2d, conv3d = _function(Conv1D, False), _function(Conv2D, False), _function(Conv3D, False)
conv2d_transpose = _function(Conv2DTranspose, False)
batch_normalization = _function(BatchNormalization, True)
dropout = _function(Dropout, True)
flatten = _function(Flatten, False)
max_pooling1d, max_pooling2d, max_pooling3d = (_function(c, False) for c in (MaxPooling1D, MaxPooling2D, MaxPooling3D))
average_pooling1d, average_pooling2d, average_pooling3d = (
    _function(c, False) for c in (AveragePooling1D, AveragePooling2D, AveragePooling3D))
