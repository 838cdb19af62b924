"""tf.contrib.layers' feature columns as tf.feature_column's of the same kind, contrib's arguments read."""

import numpy as np
import pytest
import tensorflow as tf

from common.contrib import columns as cc
from common.layers import DenseFeatures


def test_each_contrib_column_is_tf_feature_columns_of_its_kind_and_computes_so():
    color = cc.sparse_column_with_keys("color", ["red", "green"], combiner="sqrtn")
    assert isinstance(cc.real_valued_column("", dimension=4), type(tf.feature_column.numeric_column("x")))
    columns = [cc.real_valued_column("size", dimension=2), cc.one_hot_column(color),
               cc.bucketized_column(cc.real_valued_column("age"), [18.0, 65.0]),
               cc.embedding_column(cc.sparse_column_with_hash_bucket("word", 10), 3,
                                   initializer=tf.constant_initializer(0.5)),
               cc.one_hot_column(cc.crossed_column([color, cc.sparse_column_with_keys("shape", ["box"])], 5))]
    features = {"size": tf.constant([[1.0, 2.0]]), "color": tf.constant([["green"]]), "age": tf.constant([[70.0]]),
                "word": tf.constant([["hello"]]), "shape": tf.constant([["box"]])}
    dense = DenseFeatures(columns)(features).numpy()[0]
    # sorted by name: age_bucketized (3), color_X_shape_indicator (5), color_indicator (2), size (2), word (3)
    np.testing.assert_allclose(dense[:3], [0, 0, 1])
    assert dense[3:8].sum() == 1
    np.testing.assert_allclose(dense[8:], [0, 1, 1, 2, 0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="dimension=None.*give the dimension"):
        cc.real_valued_column("x", dimension=None)
    with pytest.raises(ValueError, match="several hash keys"):
        cc.sparse_column_with_hash_bucket("x", 4, hash_keys=[[1, 2]])
