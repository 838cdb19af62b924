"""tf.contrib.layers' feature columns (TensorFlow 1.0's, before tf.feature_column): tf.feature_column's of each kind.

contrib.learn's estimators took these; the premade ones here
(common.contrib.learn_canned) take tf.feature_column's, which these are,
with contrib's arguments read: a sparse column's combiner is the linear
model's (its sum) or the embedding's; `real_valued_column("", dimension=4)`
names the features a contrib estimator was fed as one array.
"""

import tensorflow as tf

_FC = tf.feature_column


def real_valued_column(column_name, dimension=1, default_value=None, dtype=tf.float32, normalizer=None):
    if dimension is None:
        raise ValueError(f"real_valued_column({column_name!r}, dimension=None): variable-length real-valued "
                         "columns have no tf.feature_column counterpart; give the dimension")
    return _FC.numeric_column(column_name, shape=(dimension,), default_value=default_value, dtype=dtype,
                              normalizer_fn=normalizer)


def sparse_column_with_keys(column_name, keys, default_value=-1, combiner="sum", dtype=tf.string):
    del combiner  # (the linear model's sparse_combiner, or the embedding's)
    return _FC.categorical_column_with_vocabulary_list(column_name, keys, dtype=dtype, default_value=default_value)


def sparse_column_with_hash_bucket(column_name, hash_bucket_size, combiner="sum", dtype=tf.string, hash_keys=None):
    del combiner
    if hash_keys is not None:
        raise ValueError(f"sparse_column_with_hash_bucket({column_name!r}, hash_keys=...): several hash keys have no "
                         "tf.feature_column counterpart")
    return _FC.categorical_column_with_hash_bucket(column_name, hash_bucket_size, dtype=dtype)


def sparse_column_with_vocabulary_file(column_name, vocabulary_file, num_oov_buckets=0, vocab_size=None,
                                       default_value=-1, combiner="sum", dtype=tf.string):
    del combiner
    return _FC.categorical_column_with_vocabulary_file(column_name, vocabulary_file, vocabulary_size=vocab_size,
                                                       num_oov_buckets=num_oov_buckets, default_value=default_value,
                                                       dtype=dtype)


def weighted_sparse_column(sparse_id_column, weight_column_name, dtype=tf.float32):
    return _FC.weighted_categorical_column(sparse_id_column, weight_column_name, dtype=dtype)


def one_hot_column(sparse_id_column):
    return _FC.indicator_column(sparse_id_column)


def embedding_column(sparse_id_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    return _FC.embedding_column(sparse_id_column, dimension, combiner=combiner, initializer=initializer,
                                ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
                                max_norm=max_norm, trainable=trainable)


def bucketized_column(source_column, boundaries):
    return _FC.bucketized_column(source_column, boundaries)


def crossed_column(columns, hash_bucket_size, combiner="sum", ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                   hash_key=None):
    del combiner
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise ValueError("crossed_column(ckpt_to_load_from=...): warm-start the estimator instead "
                         "(warm_start_from=common.WarmStartSettings(...))")
    return _FC.crossed_column(list(columns), hash_bucket_size, hash_key=hash_key)
