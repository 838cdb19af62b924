"""The logits of the premade models, built with TF1's variables so checkpoints keep tf.estimator's names.

dnn: feature columns' input layer, hidden Dense layers (glorot-uniform
kernels, zero biases) with optional dropout and batch norm, a logits layer:
"dnn/hiddenlayer_0/kernel", "dnn/logits/bias", an embedding's
"dnn/input_from_feature_columns/input_layer/<column>_embedding/embedding_weights".
linear: feature columns' weighted sum, "linear/linear_model/<column>/weights"
and "linear/linear_model/bias_weights". baseline: one bias,
"baseline/bias". These are the names tf.estimator 2.15 wrote, so its
checkpoints warm-start these models and theirs.
"""

import tensorflow as tf

from common.canned import dense_columns
from common.engine import inputs
from common.internals import tensorflow_internals
from common.spec.model_fn import ModeKeys
from common.tf1 import feature_column as tf1_feature_column
from common.tf1 import layers as tf1_layers
from common.tf1 import summary as tf1_summary
from common.tf1 import variables as tf1_variables
from common.tf1_runtime import partitioned

HIDDEN_MIN_SLICE_BYTES = 256 << 10  # TF1's min_max_variable_partitioner default, for a DNN's hidden layers


def check_features(features):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dict of tensors keyed by feature column keys, got "
                         f"{type(features).__name__}")


def checked_identity_ids(features, feature_columns):
    """features, each one an identity column without a default_value reads checked to lie in [0, num_buckets):
    tf.estimator 2.15 took an id beyond them silently (an indicator of zeros); here the step fails naming the
    column and the ids (engine.inputs.input_check)."""
    checked, pending = dict(features), list(feature_columns)
    while pending:
        column = pending.pop()
        pending.extend(getattr(column, "parents", ()))
        if not isinstance(column, tf1_feature_column.IdentityCategoricalColumn) or column.default_value is not None \
                or column.key not in checked:
            continue
        value = checked[column.key]
        ids = value.values if isinstance(value, tf.SparseTensor) else value
        inside = tf.logical_and(ids >= 0, ids < column.num_buckets)
        ids = inputs.input_check(ids, tf.reduce_all(inside), f"categorical_column_with_identity({column.key!r}, "
                                 f"num_buckets={column.num_buckets}) got ids outside [0, {column.num_buckets}):",
                                 tf.boolean_mask(ids, tf.logical_not(inside)))
        checked[column.key] = tf.SparseTensor(value.indices, ids, value.dense_shape) \
            if isinstance(value, tf.SparseTensor) else ids
    return checked


def _layer_summary(value, tag):
    """tf.estimator's summaries of a layer's output: its zero fraction and its histogram."""
    tf1_summary.scalar(f"{tag}/fraction_of_zero_values", tf.math.zero_fraction(value))
    tf1_summary.histogram_tagged(f"{tag}/activation", value)


def _linear_summaries(variables):
    """tf.estimator's summaries of a linear model: its bias (a histogram when several) and the fraction of
    its weights that are zero (what Ftrl's L1 prunes)."""
    bias = next(v for v in variables if v.name.split(":")[0].endswith("bias_weights"))
    if bias.shape.num_elements() > 1:
        tf1_summary.histogram_tagged("bias", bias)
    else:
        tf1_summary.scalar("bias", tf.reshape(bias, [-1])[0])
    weights = [v for v in variables if v is not bias]
    if weights:
        zeros = tf.add_n([tf.reduce_sum(tf.cast(tf.equal(w, 0), tf.float32)) for w in weights])
        tf1_summary.scalar("fraction_of_zero_weights",
                           zeros / float(sum(w.shape.num_elements() for w in weights)))


def _input_layer(features, feature_columns):
    """tf.compat.v1.feature_column.input_layer, which refuses TF 2's shared embedding columns (the TPU ones too):
    with those, the columns are read as tf.estimator 2.15's DNN read them, the others in their scopes under
    "input_layer", a shared one's weights one variable at the root scope named by its columns
    ("i_k_shared_embedding")."""
    shared = tensorflow_internals.feature_columns.SharedEmbeddingColumn
    if not any(isinstance(column, shared) for column in feature_columns):
        return tf.compat.v1.feature_column.input_layer(features, feature_columns)
    builder = tensorflow_internals.LazyBuilder(features)
    cache = tensorflow_internals.FeatureTransformationCache(features)
    outputs = []
    with tf.compat.v1.variable_scope(None, default_name="input_layer"):
        for column in sorted(feature_columns, key=lambda column: column.name):
            if isinstance(column, shared):
                with tf.compat.v1.variable_scope(tf.compat.v1.VariableScope(reuse=None)):  # (the root scope)
                    tensor, size = column.get_dense_tensor(cache, None), column.variable_shape.num_elements()
            else:  # (TF1's input_layer's calls)
                with tf.compat.v1.variable_scope(None, default_name=column.name):
                    tensor, size = column._get_dense_tensor(builder), column._variable_shape.num_elements()
            outputs.append(tf.reshape(tensor, [tf.shape(tensor)[0], size]))
    return tf.concat(outputs, 1)


def dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn=tf.nn.relu, dropout=None,
               batch_norm=False, tag_prefix="dnn/", input_layer_partitioner=None):
    """(logits [batch, units], the trainable variables), under variable scope "dnn"; the layers' summaries
    tagged "<tag_prefix><layer>/..." (tf.compat.v1's DNN estimators wrote "dnn/dnn/hiddenlayer_0/..."). The
    partitioners are TF1's (common.tf1_runtime.partitioned): the input layer's given or of 64 MiB parts, the
    hidden layers' of 256 KiB parts."""
    check_features(features)
    features = checked_identity_ids(features, feature_columns)
    training = mode == ModeKeys.TRAIN
    with tf.compat.v1.variable_scope("dnn", partitioner=partitioned.default_partitioner(HIDDEN_MIN_SLICE_BYTES)):
        with tf.compat.v1.variable_scope("input_from_feature_columns",
                                         partitioner=input_layer_partitioner or partitioned.default_partitioner()):
            net = dense_columns.input_layer(features, list(feature_columns))
            if net is None:  # (features of several values, or columns the dense path leaves to TensorFlow)
                net = _input_layer(features, list(feature_columns))
        for index, width in enumerate(hidden_units):
            name = f"hiddenlayer_{index}"
            net = tf1_layers.dense(net, width, activation=activation_fn, name=name,
                                   kernel_initializer=tf.compat.v1.glorot_uniform_initializer())
            if dropout is not None and training:
                net = tf1_layers.dropout(net, rate=dropout, training=True)
            if batch_norm:
                with tf.compat.v1.variable_scope(name):
                    net = tf1_layers.batch_normalization(net, momentum=0.999, training=training,
                                                         name=f"batchnorm_{index}")
            _layer_summary(net, f"{tag_prefix}{name}")
        logits = tf1_layers.dense(net, units, name="logits",
                                  kernel_initializer=tf.compat.v1.glorot_uniform_initializer())
        _layer_summary(logits, f"{tag_prefix}logits")
    return logits, tf1_variables.trainable_variables("dnn/")


def linear_logits(features, units, feature_columns, sparse_combiner="sum", summarize_logits=False,
                  partitioner=None):
    """(logits [batch, units], the trainable variables), under variable scope "linear"; summarize_logits: the
    logits' summaries too (the wide part of a wide-and-deep model, as tf.estimator wrote them); the weights
    split by `partitioner`, else TF1's of 64 MiB parts."""
    check_features(features)
    features = checked_identity_ids(features, feature_columns)
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"sparse_combiner={sparse_combiner!r}: one of 'sum', 'mean', 'sqrtn'")
    with tf.compat.v1.variable_scope("linear", partitioner=partitioner or partitioned.default_partitioner()):
        logits = dense_columns.linear_model(features, list(feature_columns), units)
        if logits is None:
            logits = tf.compat.v1.feature_column.linear_model(features, list(feature_columns), units=units,
                                                              sparse_combiner=sparse_combiner)
    variables = tf1_variables.trainable_variables("linear/")
    _linear_summaries(variables)
    if summarize_logits:
        _layer_summary(logits, "linear")
    return logits, variables


def baseline_logits(features, units):
    """(logits: one bias per unit for every example, the bias), under variable scope "baseline"."""
    batch_size = _batch_size(features)
    with tf.compat.v1.variable_scope("baseline"):
        bias = tf.compat.v1.get_variable("bias", [units], initializer=tf.compat.v1.zeros_initializer())
    return tf.tile(bias[tf.newaxis, :], [batch_size, 1]), [bias]


def _batch_size(features):
    tensors = list(features.values()) if isinstance(features, dict) else [features]
    for tensor in tensors:
        if isinstance(tensor, tf.SparseTensor):
            return tf.cast(tensor.dense_shape[0], tf.int32)
        if tensor is not None:
            return tf.shape(tensor)[0]
    raise ValueError("features are empty: the baseline needs one feature to count the batch")
