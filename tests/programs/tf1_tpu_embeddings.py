"""A TPU recommender in the style of the TF 1.15 / 2.x TPU models, with use_tpu=False: an embedding column
and two shared ones declared to TPUEstimator by an EmbeddingConfigSpec with Adagrad parameters, read in
model_fn by DenseFeatures, trained by the model_fn's optimizer (CrossShardOptimizer when on a TPU)."""

import numpy as np
import tensorflow as tf

BATCH_SIZE = 4
_RNG = np.random.RandomState(21)
USERS = _RNG.randint(0, 5, (8, 1)).astype(np.int64)
ITEMS = _RNG.randint(0, 5, (8, 1)).astype(np.int64)
LAST_ITEMS = _RNG.randint(0, 5, (8, 1)).astype(np.int64)
RATINGS = _RNG.rand(8, 1).astype(np.float32)
USER_TABLE = (_RNG.randn(5, 3) * 0.3).astype(np.float32)
ITEM_TABLE = (_RNG.randn(5, 2) * 0.3).astype(np.float32)
KERNEL = (_RNG.randn(7, 1) * 0.3).astype(np.float32)


def feature_columns():
    fc, tpu = tf.feature_column, tf.compat.v1.tpu.experimental
    users = tpu.embedding_column(fc.categorical_column_with_identity("user", 5), 3,
                                 initializer=tf.compat.v1.constant_initializer(USER_TABLE))
    items = tpu.shared_embedding_columns(
        [fc.categorical_column_with_identity(key, 5) for key in ("item", "last_item")], 2,
        initializer=tf.compat.v1.constant_initializer(ITEM_TABLE))
    return [users] + list(items)


def input_fn(params):
    features = {"user": USERS, "item": ITEMS, "last_item": LAST_ITEMS}
    dataset = tf.data.Dataset.from_tensor_slices((features, RATINGS))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    net = tf.keras.layers.DenseFeatures(feature_columns())(features)  # (TF 1's input_layer refuses shared ones)
    prediction = tf.compat.v1.layers.dense(net, 1, kernel_initializer=tf.compat.v1.constant_initializer(KERNEL))
    loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    if params["use_tpu"]:
        optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def train(model_dir, steps=3):
    """Trains; returns {variable name: value} and the estimator."""
    spec = tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec(
        feature_columns=feature_columns(),
        optimization_parameters=tf.compat.v1.tpu.experimental.AdagradParameters(0.1))
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn, model_dir=model_dir, config=tf.compat.v1.estimator.tpu.RunConfig(),
        use_tpu=False, train_batch_size=BATCH_SIZE, embedding_config_spec=spec)
    estimator.train(input_fn, steps=steps)
    return {name: estimator.get_variable_value(name) for name in estimator.get_variable_names()}, estimator
