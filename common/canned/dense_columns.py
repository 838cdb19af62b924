"""The premade models' feature columns on one value per example, without TensorFlow's sparse path.

tf.compat.v1.feature_column.input_layer and linear_model turn every
categorical feature into a SparseTensor and read its weights through
safe_embedding_lookup_sparse: some forty small ops a column, forward and
backward, which on a CPU cost more than the model's matrix products (a
wide-and-deep step on census-shaped data: 2,047 ops, 3.0 ms). When every
feature a model reads holds one value per example (a dense [batch] or
[batch, 1] tensor, what a CSV or a FixedLenFeature gives), each column is an
id per example: the weights' rows are gathered, an indicator is a one-hot,
and a missing value (TF's ignored '' or -1, an id the vocabulary does not
hold) reads zeros, as the sparse path's empty row did. Variables keep their
names, shapes, initializers and partitions, and gradients are TF's: one row
per distinct id, so an optimizer updates the rows it updated before and no
other. Any other column or feature (multi-valued, weighted, shared, from a
vocabulary file) gets TensorFlow's own layers: these return None then.
"""

import tensorflow as tf

from common.internals import tensorflow_internals

columns_lib = tensorflow_internals.feature_columns


def input_layer(features, feature_columns):
    """tf.compat.v1.feature_column.input_layer(features, feature_columns) [batch, width], or None."""
    ids = _IdReader(features)
    plan = [(column, _dense_reader(column, ids)) for column in sorted(feature_columns, key=lambda c: c.name)]
    if any(read is None for _, read in plan):
        return None
    with tf.compat.v1.variable_scope(None, default_name="input_layer"):
        outputs = []
        for column, read in plan:
            with tf.compat.v1.variable_scope(None, default_name=column.name):
                outputs.append(read())
        return tf.concat(outputs, 1)


def linear_model(features, feature_columns, units):
    """tf.compat.v1.feature_column.linear_model(features, feature_columns, units) [batch, units] (any
    sparse_combiner: with one value a row they agree), or None."""
    ids = _IdReader(features)
    plan = []
    for column in sorted(feature_columns, key=lambda c: c.name):
        if isinstance(column, columns_lib.NumericColumn):
            value = ids.numeric(column)
            if value is None:
                return None
            plan.append((column, value, None))
        else:
            found = ids.categorical(column)
            if found is None:
                return None
            plan.append((column, None, found))
    with tf.compat.v1.variable_scope(None, default_name="linear_model"):
        sums = []
        for column, value, found in plan:
            with tf.compat.v1.variable_scope(None, default_name=column.name):
                size = value.shape[1] if value is not None else column.num_buckets
                weights = tf.compat.v1.get_variable("weights", [size, units], tf.float32,
                                                    initializer=tf.compat.v1.zeros_initializer())
                sums.append(tf.matmul(value, weights) if value is not None else _rows(weights, *found))
        bias = tf.compat.v1.get_variable("bias_weights", [units], tf.float32,
                                         initializer=tf.compat.v1.zeros_initializer())
        return tf.nn.bias_add(tf.add_n(sums), bias)


def _dense_reader(column, ids):
    """A function making the column's [batch, width] in its variable scope, or None."""
    if isinstance(column, columns_lib.NumericColumn):
        value = ids.numeric(column)
        return None if value is None else lambda: value
    if isinstance(column, columns_lib.BucketizedColumn):
        bucketized = ids.bucketized(column)
        depth = len(column.boundaries) + 1
        return None if bucketized is None else lambda: tf.reshape(
            tf.one_hot(bucketized, depth, on_value=1.0, off_value=0.0), [-1, column.variable_shape.num_elements()])
    if isinstance(column, columns_lib.IndicatorColumn):
        found = ids.categorical(column.categorical_column)
        if found is None:
            return None
        values, valid = found
        values = values if valid is None else tf.where(valid, values, tf.constant(-1, tf.int64))
        return lambda: tf.one_hot(values, column.categorical_column.num_buckets, on_value=1.0, off_value=0.0)
    if isinstance(column, columns_lib.EmbeddingColumn) and not (column.max_norm or column.ckpt_to_load_from):
        found = ids.categorical(column.categorical_column)
        return None if found is None else lambda: _rows(tf.compat.v1.get_variable(
            "embedding_weights", [column.categorical_column.num_buckets, column.dimension], tf.float32,
            initializer=column.initializer, trainable=column.trainable), *found)
    return None


class _IdReader:
    """Each column's ids ([batch] int64) and which are present ([batch] bool, None: all), as TF's columns
    compute them from features of one value per example; None where that is not what the features hold."""

    def __init__(self, features):
        self._features = features

    def _single(self, key):
        value = self._features.get(key) if isinstance(key, str) else None
        if not isinstance(value, tf.Tensor) or value.shape.rank not in (1, 2):
            return None
        if value.shape.rank == 2 and value.shape[1] != 1:
            return None
        return tf.reshape(value, [-1])

    def numeric(self, column):
        """The numeric column's [batch, size] float32 (its normalizer applied), or None."""
        value = self._features.get(column.key)
        size = column.variable_shape.num_elements()
        if not isinstance(value, tf.Tensor) or value.dtype == tf.string or value.shape.rank is None \
                or value.shape[1:].num_elements() not in (None, size):
            return None
        value = column.normalizer_fn(value) if column.normalizer_fn is not None else value
        return tf.reshape(tf.cast(value, tf.float32), [tf.shape(value)[0], size])

    def bucketized(self, column):
        """The bucket ids [batch, source size] of a bucketized column, or None."""
        source = self.numeric(column.source_column)
        return None if source is None else tf.cast(
            tf.raw_ops.Bucketize(input=source, boundaries=list(column.boundaries)), tf.int64)

    def categorical(self, column):
        """(ids, present) of a categorical column, or None."""
        if isinstance(column, columns_lib.BucketizedColumn):
            bucketized = self.bucketized(column) if column.source_column.shape == (1,) else None
            return None if bucketized is None else (tf.reshape(bucketized, [-1]), None)
        if isinstance(column, columns_lib.CrossedColumn):
            return self._crossed(column)
        if not isinstance(column, (columns_lib.VocabularyListCategoricalColumn,
                                   columns_lib.HashedCategoricalColumn)):
            return None
        value = self._single(column.key)
        if value is None or value.dtype.is_integer != column.dtype.is_integer:
            return None
        present = tf.not_equal(value, "" if value.dtype == tf.string else tf.cast(-1, value.dtype))
        if isinstance(column, columns_lib.HashedCategoricalColumn):
            text = value if value.dtype == tf.string else tf.strings.as_string(value)
            return tf.strings.to_hash_bucket_fast(text, column.hash_bucket_size), present
        if value.dtype.is_integer:
            value = tf.cast(value, tf.int64)
        with tf.init_scope():  # (made and filled once, outside the step, as TF's column made its table)
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                tf.constant(list(column.vocabulary_list), value.dtype),
                tf.range(len(column.vocabulary_list), dtype=tf.int64)), default_value=-1)
        found = table.lookup(value)
        if column.num_oov_buckets:
            text = value if value.dtype == tf.string else tf.strings.as_string(value)
            oov = len(column.vocabulary_list) + tf.strings.to_hash_bucket_fast(text, column.num_oov_buckets)
            found = tf.where(found < 0, oov, found)
        elif column.default_value != -1:
            found = tf.where(found < 0, tf.constant(column.default_value, tf.int64), found)
        return found, tf.logical_and(present, found >= 0)

    def _crossed(self, column):
        """A cross's hashed ids: its bucketized keys by bucket, then its raw features as given (a '' crossed
        too), the order TF's cross took them in (its column keys' sparse ids before its dense features)."""
        bucketized, raw = [], []
        for key in column.keys:
            if isinstance(key, columns_lib.BucketizedColumn):
                found = self.categorical(key)
                value = None if found is None else found[0]
            else:
                value = self._single(key)
            if value is None:
                return None
            (bucketized if isinstance(key, columns_lib.BucketizedColumn) else raw).append(value[:, tf.newaxis])
        inputs = bucketized + raw
        crossed = tf.sparse.cross_hashed(inputs, num_buckets=column.hash_bucket_size, hash_key=column.hash_key)
        return crossed.values, None


def _rows(weights, ids, present):
    """The rows of `weights` (a variable or its partitions) for `ids`, zeros where not `present`: its gradient
    is one row per distinct present id, as safe_embedding_lookup_sparse's."""
    if present is None:
        return _distinct_rows(weights, ids)
    positions = tf.where(present)
    rows = _distinct_rows(weights, tf.gather_nd(ids, positions))
    shape = tf.stack([tf.shape(ids, out_type=tf.int64)[0], tf.shape(rows, out_type=tf.int64)[1]])
    return tf.scatter_nd(positions, rows, shape)


def _distinct_rows(weights, ids):
    """The rows for `ids`, each distinct id's gathered once (partitions: TF's "div" split)."""
    distinct, index = tf.unique(ids)
    return tf.gather(tf.nn.embedding_lookup(weights, distinct), index)
