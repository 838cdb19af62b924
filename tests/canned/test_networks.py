"""The premade networks build under tf.estimator's variable names, with its layers' options."""

import numpy as np
import pytest
import tensorflow as tf

from common import canned
from common.canned import networks
from tests.canned import reference


def test_batch_norm_and_dropout_layers_are_named_as_tf_estimator_named_them(tmp_path):
    a, b, c = reference.columns()
    estimator = canned.DNNRegressor([4, 2], [a, b, tf.feature_column.indicator_column(c)], model_dir=str(tmp_path),
                                    batch_norm=True, dropout=0.5)
    estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=2)
    names = set(estimator.get_variable_names())
    assert {"dnn/hiddenlayer_0/batchnorm_0/gamma", "dnn/hiddenlayer_0/batchnorm_0/moving_mean",
            "dnn/hiddenlayer_1/kernel", "dnn/logits/kernel"} <= names
    moving = estimator.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_variance")
    assert np.all(moving != 1.0)  # momentum 0.999 moved it a little
    assert np.all(np.abs(moving - 1.0) < 0.01)


def test_the_baseline_counts_a_sparse_features_batch_and_refuses_empty_features():
    sparse = tf.sparse.from_dense(tf.constant([["a"], ["b"], ["c"]]))
    assert int(networks._batch_size({"s": sparse})) == 3
    with pytest.raises(ValueError, match="features are empty"):
        networks._batch_size({})
    with pytest.raises(ValueError, match="features should be a dict"):
        networks.check_features(tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="sparse_combiner='max'"):
        networks.linear_logits({}, 1, [], sparse_combiner="max")
