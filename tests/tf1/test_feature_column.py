"""TF1's shared embedding columns, built eagerly, read by a premade estimator as TF1 read them."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common import canned
from common.tf1 import feature_column
from common.tf1 import train as tf1_train
from tests import models

FEATURES = {"c": np.array(["x", "y", "z", "x", "q", "y", "z", "x"]),
            "h": np.array(["p", "q", "r", "s", "p", "q", "r", "s"])}
LABELS = np.array([1, 0, 0, 1, 0, 0, 0, 1])


def test_tensorflow_refuses_them_eagerly_and_here_they_build():
    c = tf.feature_column.categorical_column_with_vocabulary_list("c", ["x", "y", "z"], num_oov_buckets=1)
    h = tf.feature_column.categorical_column_with_vocabulary_list("h", ["p", "q", "r", "s"])
    with pytest.raises(RuntimeError, match="not supported when eager execution is enabled"):
        tf.compat.v1.feature_column.shared_embedding_columns([c, h], 2)
    shared = feature_column.shared_embedding_columns([c, h], 2, combiner="sum")
    assert [column.name for column in shared] == ["c_shared_embedding", "h_shared_embedding"]
    assert {column.shared_embedding_collection_name for column in shared} == {"c_h_shared_embedding"}


def test_one_embedding_serves_both_columns_on_two_towers(tmp_path):
    c = tf.feature_column.categorical_column_with_vocabulary_list("c", ["x", "y", "z"], num_oov_buckets=1)
    h = tf.feature_column.categorical_column_with_vocabulary_list("h", ["p", "q", "r", "s"])
    shared = feature_column.shared_embedding_columns([c, h], 3)
    estimator = canned.DNNClassifier([4], shared, model_dir=str(tmp_path), optimizer=tf1_train.AdamOptimizer(0.05),
                                     config=common.RunConfig(tf_random_seed=1, device_plan=models.plan(2)))

    def train():
        return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(8)

    def evaluate():
        return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(8)

    estimator.train(train, steps=1)
    before = estimator.evaluate(evaluate)["loss"]
    estimator.train(train, steps=60)
    assert estimator.evaluate(evaluate)["loss"] < 0.5 * before
    embeddings = [name for name in estimator.get_variable_names() if name.endswith("embedding_weights")]
    assert embeddings == ["dnn/input_from_feature_columns/input_layer/c_h_shared_embedding/embedding_weights"]
    assert estimator.get_variable_value(embeddings[0]).shape == (4, 3)  # one row per bucket, for both
