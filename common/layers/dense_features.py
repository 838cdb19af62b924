"""tf.keras.layers.DenseFeatures (Keras 2) as a Keras 3 layer: feature columns to one dense tensor.

Keras 3 dropped DenseFeatures; `tf.feature_column` itself still works in
TensorFlow 2.21. This layer does what Keras 2's did: columns sorted by
name, each column's dense tensor reshaped to (batch, its size) and
concatenated; the columns' variables (embedding weights) are this layer's
weights, one sub-layer per column, so their paths are Keras 2's
`dense_features/<column>/embedding_weights`. It works eagerly, in a Keras
model, and inside model_fn (where the framework serves its variables).
"""

import re

import keras
import tensorflow as tf

from common.internals import tensorflow_internals

_DENSE_COLUMN = tensorflow_internals.DenseColumn


def _scope_name(column_name):
    """Keras 2's variable-scope name of a column (characters a scope cannot hold become "_")."""
    return re.sub(r"[^A-Za-z0-9_.\\-]", "_", column_name)


class _ColumnState(keras.layers.Layer):
    """The variables and resources one column creates (tf.feature_column's StateManager for it)."""

    def __init__(self, column, trainable, **kwargs):
        super().__init__(name=_scope_name(column.name), trainable=trainable, **kwargs)
        self._made = {}
        self._resources = {}

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True, use_resource=True,
                        initializer=None):
        del feature_column, use_resource
        if name in self._made:
            raise ValueError(f"variable {name} of column {self.name} exists already")
        dtype = tf.as_dtype(dtype or tf.float32)
        self._made[name] = self.add_weight(
            name=name, shape=tuple(shape), dtype=dtype.name, trainable=self.trainable and trainable,
            initializer=(lambda shape, dtype=None: initializer(shape, dtype=dtype)) if initializer else "zeros")
        return self.get_variable(None, name)

    def get_variable(self, feature_column, name):
        return self._made[name].value  # the tf.Variable (tf.feature_column's lookups take TensorFlow's own)

    def add_resource(self, feature_column, name, resource):
        self._resources[name] = resource

    def has_resource(self, feature_column, name):
        return name in self._resources

    def get_resource(self, feature_column, name):
        return self._resources[name]


class FeaturesLayer(keras.layers.Layer):
    """Keras 2's base of its feature-column layers: the columns checked, sorted by name, each with its state."""

    column_type = _DENSE_COLUMN

    def __init__(self, feature_columns, trainable=True, name=None, **kwargs):
        what = type(self).__name__
        super().__init__(name=name or re.sub(r"(?<!^)(?=[A-Z])", "_", what).lower(), trainable=trainable, **kwargs)
        if isinstance(feature_columns, dict):
            raise ValueError(f"{what}: feature_columns must be a list of feature columns, not a dict")
        columns = list(feature_columns) if not isinstance(feature_columns, self.column_type) else [feature_columns]
        if not columns:
            raise ValueError(f"{what}: feature_columns must not be empty")
        for column in columns:
            if not isinstance(column, self.column_type):
                raise ValueError(f"Items of feature_columns must be a {self.column_type.__name__}. You can wrap a "
                                 f"categorical column with an embedding_column or indicator_column. Given: {column}")
        names = [column.name for column in columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{what}: duplicate feature column names in {names}")
        # (kept out of Keras's tracking, which rebuilds a namedtuple from its fields: the TPU embedding columns'
        # constructors take other arguments; a column's state is in its _ColumnState, tracked)
        object.__setattr__(self, "_columns", sorted(columns, key=lambda column: column.name))
        self._states = [_ColumnState(column, trainable) for column in self._columns]

    def build(self, input_shape=None):
        for column, state in zip(self._columns, self._states):
            column.create_state(state)
            state.built = True
        self.built = True

    def _column_scope(self, column):
        return tf.name_scope(_scope_name(column.name))

    def _cache(self, features):
        if not isinstance(features, dict):
            raise ValueError(f"{type(self).__name__} takes a dict of features, got {type(features).__name__}")
        return tensorflow_internals.FeatureTransformationCache(features)


class DenseFeatures(FeaturesLayer):
    """DenseFeatures(feature_columns, trainable=True, name=None): features dict -> (batch, total size) float32."""

    def call(self, features, training=None):
        cache = self._cache(features)
        outputs = []
        for column, state in zip(self._columns, self._states):
            with self._column_scope(column):
                tensor = column.get_dense_tensor(cache, state)
                size = column.variable_shape.num_elements()
                outputs.append(tf.reshape(tensor, (tf.shape(tensor)[0], size)))
        return tf.concat(outputs, -1)

    def compute_output_shape(self, input_shape):
        return (None, sum(column.variable_shape.num_elements() for column in self._columns))
