"""tf.keras.experimental.SequenceFeatures (Keras 2) as a Keras 3 layer: sequence columns to (input, length).

Keras 3 dropped it; TensorFlow 2.21's sequence feature columns still work.
As Keras 2's: the columns sorted by name, each column's sequence tensor
reshaped to (batch, time, its size) and concatenated on the last axis, and
the sequence length the columns agree on (checked when the step runs);
embedding weights under `sequence_features/<column>/embedding_weights`.
"""

import tensorflow as tf

from common.internals import tensorflow_internals
from common.layers.dense_features import FeaturesLayer

_SEQUENCE_DENSE_COLUMN = tensorflow_internals.SequenceDenseColumn


class SequenceFeatures(FeaturesLayer):
    """SequenceFeatures(feature_columns, trainable=True, name=None): features dict -> (sequence_input
    [batch, time, total size], sequence_length [batch])."""

    column_type = _SEQUENCE_DENSE_COLUMN

    def call(self, features, training=None):
        cache = self._cache(features)
        outputs, lengths = [], []
        for column, state in zip(self._columns, self._states):
            with self._column_scope(column):
                tensor, length = column.get_sequence_dense_tensor(cache, state)
                size = column.variable_shape.num_elements()
                outputs.append(tf.reshape(tensor, tf.concat([tf.shape(tensor)[:2], [size]], axis=0)))
                lengths.append(length)
        for column, length in zip(self._columns[1:], lengths[1:]):
            with tf.control_dependencies([tf.debugging.assert_equal(
                    lengths[0], length, message=f"SequenceFeatures: {column.name}'s sequence lengths differ from "
                    f"{self._columns[0].name}'s")]):
                lengths[0] = tf.identity(lengths[0])
        return tf.concat(outputs, -1), lengths[0]
