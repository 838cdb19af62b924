"""TF1's feature-column classes as TF 2 builds them, and TF1's shared embedding columns.

TF1 programs filtered their columns by TF1's private classes
(`isinstance(c, feature_column._NumericColumn)`, from
tensorflow.python.feature_column.feature_column). TensorFlow 2's column
functions return other classes (feature_column_v2's), so every such filter
came out empty; the upgrade maps each private class to the class the same
function returns now, named here.

Shared embedding columns TensorFlow builds only in graph mode.

`tf.compat.v1.feature_column.shared_embedding_columns` (and TF2's
`tf.feature_column.shared_embeddings`) raise "not supported when eager
execution is enabled" when a program builds its columns at module level, as
TF1 programs did in graph mode. The columns themselves hold no graph state
(names, sizes and an initializer); their one embedding variable is made
where a model reads them, inside model_fn. So they are built here in a
throwaway graph and read by the premade estimators' input layer and linear
model (and tf.compat.v1.feature_column.input_layer in a model_fn) as TF1
read them: one "<keys>_shared_embedding" variable for all of them.
"""

import tensorflow as tf

from common.internals import tensorflow_internals

_columns = tensorflow_internals.feature_columns

# The classes TF 2's column functions return (the upgrade's TF1_COLUMN_CLASSES maps TF1's private names here)
NumericColumn = _columns.NumericColumn
BucketizedColumn = _columns.BucketizedColumn
EmbeddingColumn = _columns.EmbeddingColumn
IndicatorColumn = _columns.IndicatorColumn
HashedCategoricalColumn = _columns.HashedCategoricalColumn
IdentityCategoricalColumn = _columns.IdentityCategoricalColumn
VocabularyListCategoricalColumn = _columns.VocabularyListCategoricalColumn
VocabularyFileCategoricalColumn = _columns.VocabularyFileCategoricalColumn
CrossedColumn = _columns.CrossedColumn
WeightedCategoricalColumn = _columns.WeightedCategoricalColumn
SequenceCategoricalColumn = _columns.SequenceCategoricalColumn


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True,
                             use_safe_embedding_lookup=True):
    """TF1's shared_embedding_columns, with its arguments, callable eagerly."""
    with tf.Graph().as_default():
        return tf.compat.v1.feature_column.shared_embedding_columns(
            categorical_columns, dimension, combiner=combiner, initializer=initializer,
            shared_embedding_collection_name=shared_embedding_collection_name, ckpt_to_load_from=ckpt_to_load_from,
            tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable,
            use_safe_embedding_lookup=use_safe_embedding_lookup)
