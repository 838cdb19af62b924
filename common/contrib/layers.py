"""The tf.contrib functions TF1 estimator programs leaned on, as TF1.15 computed them.

tf.contrib left TensorFlow with 2.0 and nothing in core took these names:
`tf.contrib.layers.layer_norm` (BERT's, on get_variable so its
"LayerNorm/beta" and "LayerNorm/gamma" reach the checkpoint as a
pretrained BERT checkpoint names them), the initializer and regularizer
helpers, and the `tf.contrib.lookup` table builders (on tf.lookup's
tables, which the export tracks). The upgrade maps the contrib names here.
"""

import functools

import tensorflow as tf

from common.contrib import arg_scopes
from common.contrib.initializers import (  # noqa: F401 (contrib's names)
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,  # noqa: F401 (contrib.layers' name)
)
from common.tf1 import layers as tf1_layers
from common.tf1 import summary as tf1_summary
from common.tf1 import train as tf1_train

LAYER_NORM_EPSILON = 1e-12  # contrib's layer_norm used this, not Keras' 1e-3


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Normalizes over the axes from begin_norm_axis on, with "beta" (zeros) and "gamma" (ones) over the
    axes from begin_params_axis on, made by get_variable in the scope `scope` (default "LayerNorm")."""
    del variables_collections, outputs_collections  # TF1 graph collections this project has no reader for
    with tf.compat.v1.variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if rank is None:
            raise ValueError(f"layer_norm: inputs {inputs.name if hasattr(inputs, 'name') else ''} have unknown rank")
        if begin_norm_axis < 0:
            begin_norm_axis += rank
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"layer_norm: begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank ({rank})")
        params_shape = inputs.shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"layer_norm: inputs {inputs.shape} have undefined dimensions from axis "
                             f"{begin_params_axis} on")
        dtype = inputs.dtype.base_dtype
        beta = gamma = None
        if center:
            beta = tf.compat.v1.get_variable("beta", params_shape, dtype, tf.compat.v1.zeros_initializer(),
                                             trainable=trainable)
        if scale:
            gamma = tf.compat.v1.get_variable("gamma", params_shape, dtype, tf.compat.v1.ones_initializer(),
                                              trainable=trainable)
        mean, variance = tf.nn.moments(inputs, list(range(begin_norm_axis, rank)), keepdims=True)
        outputs = tf.nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                            variance_epsilon=LAYER_NORM_EPSILON)
        outputs.set_shape(inputs.shape)
        return outputs if activation_fn is None else activation_fn(outputs)


def l2_regularizer(scale, scope=None):
    """scale * sum(w ** 2) / 2, TF1's l2 penalty (tf.nn.l2_loss halves)."""
    del scope
    if scale < 0:
        raise ValueError(f"l2_regularizer: scale {scale} is negative")

    def regularize(weights):
        return tf.cast(scale, weights.dtype) * tf.nn.l2_loss(weights)
    return regularize


def _ids(size):
    return tf.range(size, dtype=tf.int64)


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=None,
                            dtype=tf.string, name=None):
    """A table from each vocabulary entry to its position; an unknown key gives default_value, or with
    num_oov_buckets its hash bucket after the vocabulary (Fingerprint64, TF1's default hasher)."""
    if hasher_spec is not None:
        raise ValueError("index_table_from_tensor: only the default hasher (Fingerprint64) is kept; "
                         "leave hasher_spec out")
    keys = tf.convert_to_tensor(vocabulary_list, dtype=dtype)
    initializer = tf.lookup.KeyValueTensorInitializer(keys, _ids(tf.size(keys, out_type=tf.int64)))
    if num_oov_buckets:
        return tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets, name=name)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """The inverse table: a position to its vocabulary entry, default_value past the end."""
    values = tf.convert_to_tensor(vocabulary_list, dtype=tf.string)
    initializer = tf.lookup.KeyValueTensorInitializer(_ids(tf.size(values, out_type=tf.int64)), values)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)


def index_table_from_file(vocabulary_file, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=None, key_dtype=tf.string, name=None, key_column_index=-2,
                          value_column_index=-1, delimiter="\t"):
    """A table from each line of vocabulary_file (or a column of it) to its line number."""
    if hasher_spec is not None:
        raise ValueError("index_table_from_file: only the default hasher (Fingerprint64) is kept; "
                         "leave hasher_spec out")
    if not tf.io.gfile.exists(vocabulary_file):
        raise ValueError(f"index_table_from_file: vocabulary_file {vocabulary_file} does not exist")
    initializer = tf.lookup.TextFileInitializer(vocabulary_file, key_dtype, key_column_index, tf.int64,
                                                value_column_index, vocab_size=vocab_size, delimiter=delimiter)
    if num_oov_buckets:
        return tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets, name=name)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None, regularizer=None,
                   trainable=True, scope=None, reuse=None):
    """The [batch, time, embed_dim] embeddings of the ids [batch, time], from "EmbedSequence/embeddings"
    (vocab_size x embed_dim, get_variable's default initializer unless given), as contrib.layers made it."""
    if vocab_size is None or embed_dim is None:
        raise ValueError("embed_sequence: vocab_size and embed_dim must both be given")
    with tf.compat.v1.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = tf.compat.v1.get_variable("embeddings", [vocab_size, embed_dim], initializer=initializer,
                                               regularizer=regularizer, trainable=trainable)
        if unique:
            unique_ids, positions = tf.unique(tf.reshape(ids, [-1]))
            looked_up = tf.nn.embedding_lookup(embeddings, unique_ids)
            return tf.reshape(tf.gather(looked_up, positions), tf.concat([tf.shape(ids), [embed_dim]], 0))
        return tf.nn.embedding_lookup(embeddings, ids)


def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] to [batch, k], contrib.layers.flatten's."""
    del outputs_collections
    with tf.name_scope(scope or "Flatten"):
        inputs = tf.convert_to_tensor(inputs)
        if inputs.shape.rank is not None and inputs.shape.rank < 2:
            raise ValueError(f"flatten: inputs must have a least 2 dimensions, got shape {inputs.shape}")
        static = inputs.shape[1:]
        width = static.num_elements() if static.is_fully_defined() else -1
        return tf.reshape(inputs, [tf.shape(inputs)[0], width])


def _initializer(initializers, name, default):
    return (initializers or {}).get(name, default)


def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=tf.compat.v1.GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """contrib's batch norm: "BatchNorm/{beta,gamma,moving_mean,moving_variance}" in the caller's scope, moving
    averages kept as TF1 kept them (common.tf1.layers' batch norm, with contrib's defaults: decay 0.999, no
    scale unless asked)."""
    del variables_collections, outputs_collections, fused, updates_collections  # the framework applies the updates
    unsupported = {"batch_weights": batch_weights, "zero_debias_moving_mean": zero_debias_moving_mean,
                   "renorm": renorm, "renorm_clipping": renorm_clipping, "adjustment": adjustment}
    given = sorted(name for name, value in unsupported.items() if value)
    if given:
        raise NotImplementedError(f"contrib.layers.batch_norm: {', '.join(given)} not supported; leave them out")
    del renorm_decay
    with tf.compat.v1.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        regularizers = param_regularizers or {}
        layer = tf1_layers.BatchNormalization(
            axis=1 if data_format.startswith("NC") else -1, momentum=decay, epsilon=epsilon, center=center,
            scale=scale, beta_initializer=_initializer(param_initializers, "beta", tf.compat.v1.zeros_initializer()),
            gamma_initializer=_initializer(param_initializers, "gamma", tf.compat.v1.ones_initializer()),
            moving_mean_initializer=_initializer(param_initializers, "moving_mean", tf.compat.v1.zeros_initializer()),
            moving_variance_initializer=_initializer(param_initializers, "moving_variance",
                                                     tf.compat.v1.ones_initializer()),
            beta_regularizer=regularizers.get("beta"), gamma_regularizer=regularizers.get("gamma"),
            trainable=trainable, _scope=sc, _reuse=reuse)
        outputs = layer(inputs, training=is_training)
        return outputs if activation_fn is None else activation_fn(outputs)


def _normalized_or_biased(outputs, normalizer_fn, normalizer_params, biases_initializer, biases_regularizer,
                          trainable, data_format=None):
    """contrib's layers' tail: the normalizer when given, else "biases" (none with biases_initializer=False)."""
    if normalizer_fn is not None:
        return normalizer_fn(outputs, **(normalizer_params or {}))
    if biases_initializer is False:
        return outputs
    channels = int(outputs.shape[1 if data_format == "NCHW" else -1])
    biases = tf.compat.v1.get_variable("biases", [channels], outputs.dtype,
                                       initializer=biases_initializer or tf.compat.v1.zeros_initializer(),
                                       regularizer=biases_regularizer, trainable=trainable)
    return tf.nn.bias_add(outputs, biases, data_format=data_format)


def fully_connected(inputs, num_outputs, activation_fn=tf.nn.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=None, weights_regularizer=None, biases_initializer=None,
                    biases_regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    """contrib's dense layer: "fully_connected/{weights,biases}", ReLU by default, an optional normalizer in
    place of the biases."""
    del variables_collections, outputs_collections
    with tf.compat.v1.variable_scope(scope, "fully_connected", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        weights = tf.compat.v1.get_variable(
            "weights", [int(inputs.shape[-1]), num_outputs], inputs.dtype,
            initializer=weights_initializer or xavier_initializer(), regularizer=weights_regularizer,
            trainable=trainable)
        outputs = tf.tensordot(inputs, weights, [[inputs.shape.rank - 1], [0]])
        outputs = _normalized_or_biased(outputs, normalizer_fn, normalizer_params, biases_initializer,
                                        biases_regularizer, trainable)
        return outputs if activation_fn is None else activation_fn(outputs)


def batch_and_drop_remainder(batch_size):
    """contrib.data's transformation: whole batches only (Dataset.batch(..., drop_remainder=True) since 1.10)."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """contrib.data's padded counterpart of batch_and_drop_remainder."""
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values, drop_remainder=True)


def byte_size_load_fn(op):
    """The bytes a variable op's value holds (contrib.training's load function for placing variables)."""
    if op.type in ("Variable", "VariableV2", "VarHandleOp"):
        shape, size = tf.TensorShape(op.get_attr("shape")), tf.as_dtype(op.get_attr("dtype")).size
    else:
        shape, size = op.outputs[0].shape, op.outputs[0].dtype.size
    if not shape.is_fully_defined():
        raise ValueError(f"byte_size_load_fn: op {op.name} has a shape that is not fully defined: {shape}")
    return shape.num_elements() * size


class GreedyLoadBalancingStrategy:
    """contrib.training's placement: each op to the task that holds the least load so far (load_fn's)."""

    def __init__(self, num_tasks, load_fn):
        if num_tasks < 1:
            raise ValueError(f"GreedyLoadBalancingStrategy: num_tasks must be >= 1, got {num_tasks}")
        self._loads = [0] * num_tasks
        self._load_fn = load_fn

    def __call__(self, op):
        task = min(range(len(self._loads)), key=lambda i: (self._loads[i], i))
        self._loads[task] += self._load_fn(op)
        return task


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=-1, value_column_index=-2, delimiter="\t"):
    """The inverse of index_table_from_file: a line number to that line (or a column of it)."""
    if not tf.io.gfile.exists(vocabulary_file):
        raise ValueError(f"index_to_string_table_from_file: vocabulary_file {vocabulary_file} does not exist")
    initializer = tf.lookup.TextFileInitializer(vocabulary_file, tf.int64, key_column_index, tf.string,
                                                value_column_index, vocab_size=vocab_size, delimiter=delimiter)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)


_OPTIMIZERS = {"Adagrad": tf1_train.AdagradOptimizer, "Adam": tf1_train.AdamOptimizer, "Ftrl": tf1_train.FtrlOptimizer,
               "Momentum": lambda learning_rate: tf1_train.MomentumOptimizer(learning_rate, momentum=0.9),
               "RMSProp": tf1_train.RMSPropOptimizer, "SGD": tf1_train.GradientDescentOptimizer}
_SUMMARIES = ("loss", "learning_rate", "global_gradient_norm", "gradients", "gradient_norm")


def _optimizer_of(optimizer, rate):
    if isinstance(optimizer, str):
        return _OPTIMIZERS[optimizer](learning_rate=rate)
    if isinstance(optimizer, type) and issubclass(optimizer, tf1_train.Optimizer):
        return optimizer(learning_rate=rate)
    if isinstance(optimizer, tf1_train.Optimizer):
        return optimizer
    if callable(optimizer):
        made = optimizer(rate) if rate is not None else optimizer()
        if not isinstance(made, tf1_train.Optimizer):
            raise ValueError(f"optimize_loss: the optimizer function returned a {type(made).__name__}, not a TF1 "
                             "optimizer")
        return made
    raise ValueError(f"optimize_loss: optimizer must be a name, a TF1 optimizer, its class or a function; got "
                     f"{optimizer!r}")


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None, gradient_multipliers=None,
                  clip_gradients=None, learning_rate_decay_fn=None, update_ops=None, variables=None, name=None,
                  summaries=None, colocate_gradients_with_ops=False, increment_global_step=True):
    """contrib.layers' training op: the loss minimized by `optimizer` (a name such as "Adam", a TF1 optimizer,
    its class or a function of the rate) at `learning_rate` (a float kept in "OptimizeLoss/learning_rate",
    decayed by learning_rate_decay_fn), gradients clipped to the global norm clip_gradients, with its
    summaries under "OptimizeLoss/". Returns the loss, computed after the update, as contrib's did."""
    del colocate_gradients_with_ops, update_ops, increment_global_step  # the framework runs updates, counts steps
    if gradient_noise_scale is not None:
        raise NotImplementedError("optimize_loss: gradient_noise_scale is not supported; leave it out")
    if isinstance(optimizer, str) and optimizer not in _OPTIMIZERS:
        raise ValueError(f"optimize_loss: optimizer {optimizer!r} is not one of {', '.join(sorted(_OPTIMIZERS))}; "
                         "give an optimizer object or class instead")
    summaries = list(_SUMMARIES[:3]) if summaries is None else summaries
    unknown = sorted(set(summaries) - set(_SUMMARIES))
    if unknown:
        raise ValueError(f"optimize_loss: summaries {unknown} are not among {list(_SUMMARIES)}")
    loss = tf.convert_to_tensor(loss)
    with tf.compat.v1.variable_scope(name, "OptimizeLoss", [loss, global_step]) as scope:
        rate = learning_rate
        if isinstance(learning_rate, (int, float)) and not isinstance(learning_rate, bool):
            if learning_rate < 0:
                raise ValueError(f"optimize_loss: learning_rate {learning_rate} is negative")
            rate = tf.compat.v1.get_variable("learning_rate", [], trainable=False,
                                             initializer=tf.compat.v1.constant_initializer(learning_rate))
        if rate is not None and learning_rate_decay_fn is not None:
            rate = learning_rate_decay_fn(rate, global_step if global_step is not None else
                                          tf1_train.get_global_step())
        made = _optimizer_of(optimizer, rate)
        gradients = made.compute_gradients(loss, variables)
        for variable_key, multiplier in (gradient_multipliers or {}).items():
            gradients = [(g * multiplier if g is not None and (v is variable_key or
                                                                getattr(v, "name", None) == variable_key) else g, v)
                         for g, v in gradients]
        norm = tf.linalg.global_norm([g for g, _ in gradients if g is not None])
        prefix = scope.name
        if "loss" in summaries:
            tf1_summary.scalar(f"{prefix}/loss", loss)
        if "learning_rate" in summaries and rate is not None:
            tf1_summary.scalar(f"{prefix}/learning_rate", rate)
        if {"global_gradient_norm", "gradient_norm"} & set(summaries):
            tf1_summary.scalar(f"{prefix}/global_norm/gradient_norm", norm)
        if isinstance(clip_gradients, (int, float)):
            made.clip_norm = float(clip_gradients)  # the averaged gradients, clipped as contrib clipped its own
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"optimize_loss: clip_gradients must be a float or a function, got {clip_gradients!r}")
        update = made.apply_gradients(gradients, global_step=global_step, name="train")
        with tf.control_dependencies([update]):
            return tf.identity(loss)


def _pair(value):
    return [value, value] if isinstance(value, int) else list(value)


def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
           activation_fn=tf.nn.relu, normalizer_fn=None, normalizer_params=None, weights_initializer=None,
           weights_regularizer=None, biases_initializer=None, biases_regularizer=None, reuse=None,
           variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """contrib.layers' 2-D convolution: "Conv/weights" [kh, kw, in, out] and "Conv/biases", ReLU by default,
    an optional normalizer in place of the biases."""
    del variables_collections, outputs_collections
    channels_first = data_format not in (None, "NHWC")
    with tf.compat.v1.variable_scope(scope, "Conv", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        depth = int(inputs.shape[1 if channels_first else -1])
        weights = tf.compat.v1.get_variable("weights", _pair(kernel_size) + [depth, num_outputs], inputs.dtype,
                                            initializer=weights_initializer or xavier_initializer(),
                                            regularizer=weights_regularizer, trainable=trainable)
        outputs = tf.nn.convolution(inputs, weights, strides=_pair(stride), padding=padding,
                                    dilations=_pair(rate), data_format="NCHW" if channels_first else "NHWC")
        outputs = _normalized_or_biased(outputs, normalizer_fn, normalizer_params, biases_initializer,
                                        biases_regularizer, trainable, "NCHW" if channels_first else "NHWC")
        return outputs if activation_fn is None else activation_fn(outputs)


def _transposed_size(size, kernel, stride, padding):
    """An output side of a transposed convolution (TF1's deconv_output_length, without output padding)."""
    return size * stride if padding == "SAME" else (size - 1) * stride + kernel


def conv2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format="NHWC",
                     activation_fn=tf.nn.relu, normalizer_fn=None, normalizer_params=None, weights_initializer=None,
                     weights_regularizer=None, biases_initializer=None, biases_regularizer=None, reuse=None,
                     variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """contrib.layers' 2-D transposed convolution (a GAN generator's upsampling): "Conv2d_transpose/weights"
    [kh, kw, out, in] and "Conv2d_transpose/biases", ReLU by default, SAME padding multiplying each side by the
    stride (VALID: (side - 1) * stride + kernel).

    Raises:
      ValueError: a padding other than SAME or VALID.
    """
    del variables_collections, outputs_collections
    padding = padding.upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"conv2d_transpose: padding={padding!r} is not SAME or VALID")
    channels_first = data_format not in (None, "NHWC")
    layout = "NCHW" if channels_first else "NHWC"
    with tf.compat.v1.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        depth = int(inputs.shape[1 if channels_first else -1])
        kernel, strides = _pair(kernel_size), _pair(stride)
        weights = tf.compat.v1.get_variable("weights", kernel + [num_outputs, depth], inputs.dtype,
                                            initializer=weights_initializer or xavier_initializer(),
                                            regularizer=weights_regularizer, trainable=trainable)
        dynamic, static, spatial = tf.shape(inputs), inputs.shape, (2, 3) if channels_first else (1, 2)

        def shape_of(batch, sides):
            sides = [None if side is None else _transposed_size(side, k, s, padding)
                     for side, k, s in zip(sides, kernel, strides)]
            return [batch, num_outputs] + sides if channels_first else [batch] + sides + [num_outputs]
        outputs = tf.nn.conv2d_transpose(inputs, weights, tf.stack(shape_of(dynamic[0], [dynamic[a] for a in spatial])),
                                         strides=strides, padding=padding, data_format=layout)
        outputs.set_shape(shape_of(static[0], [static[a] for a in spatial]))
        outputs = _normalized_or_biased(outputs, normalizer_fn, normalizer_params, biases_initializer,
                                        biases_regularizer, trainable, layout)
        return outputs if activation_fn is None else activation_fn(outputs)


def _pool(kind):
    def pool(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
             scope=None):
        del outputs_collections
        with tf.name_scope(scope or ("MaxPool2D" if kind == "MAX" else "AvgPool2D")):
            return tf.nn.pool(inputs, _pair(kernel_size), kind, strides=_pair(stride), padding=padding,
                              data_format=data_format)
    pool.__doc__ = f"contrib.layers' 2-D {kind.lower()} pooling (stride 2 and VALID padding by default)."
    pool.__name__ = f"{kind.lower()}_pool2d"  # (its name in contrib.layers, and slim's: common.contrib.arg_scopes)
    return pool


max_pool2d = _pool("MAX")
avg_pool2d = _pool("AVG")


def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
            seed=None):
    """contrib.layers' dropout: keep_prob (not a rate), only while is_training."""
    del outputs_collections, scope
    if not is_training:
        return tf.convert_to_tensor(inputs)
    return tf.nn.dropout(inputs, rate=1 - keep_prob, noise_shape=noise_shape, seed=seed)


for _name in ("layer_norm", "embed_sequence", "flatten", "batch_norm", "fully_connected", "conv2d", "max_pool2d",
              "avg_pool2d", "dropout"):  # (arg_scope-able, as TF1 declared them: common.contrib.arg_scopes)
    globals()[_name] = arg_scopes.add_arg_scope(globals()[_name])
convolution2d = conv2d
convolution2d_transpose = conv2d_transpose
# contrib.layers' linear, relu and relu6: fully_connected with that activation
linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=tf.nn.relu)
relu6 = functools.partial(fully_connected, activation_fn=tf.nn.relu6)


def stack(inputs, layer, stack_args, **kwargs):
    """contrib.layers.stack: `layer` applied once per entry of stack_args (its arguments), each in scope
    "<layer's name>_<i>" inside "Stack" (or `scope`)."""
    scope = kwargs.pop("scope", None)
    with tf.compat.v1.variable_scope(scope, "Stack", [inputs]):
        name = scope or getattr(layer, "__name__", None) or getattr(getattr(layer, "func", None), "__name__", "stack")
        outputs = tf.convert_to_tensor(inputs)
        for index, arguments in enumerate(stack_args):
            arguments = arguments if isinstance(arguments, (list, tuple)) else [arguments]
            outputs = layer(outputs, *arguments, **dict(kwargs, scope=f"{name}_{index + 1}"))
        return outputs
