"""The model_fn over networks and a head: wide-and-deep's two optimizers each train only their own part."""

import keras
import numpy as np
import pytest

from common import canned
from common.canned import model_fns
from tests.canned import reference


def test_each_network_is_trained_by_its_own_optimizer(tmp_path):
    a, b, c = reference.columns()
    estimator = canned.DNNLinearCombinedRegressor(
        model_dir=str(tmp_path), linear_feature_columns=[c], linear_optimizer="SGD",
        dnn_feature_columns=[a, b], dnn_hidden_units=[3], dnn_optimizer=lambda: keras.optimizers.SGD(0.0))
    estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=2)
    assert np.any(estimator.get_variable_value("linear/linear_model/c/weights") != 0)
    first = estimator.get_variable_value("dnn/logits/kernel")
    estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=2)
    np.testing.assert_array_equal(estimator.get_variable_value("dnn/logits/kernel"), first)  # its rate is 0


def test_a_model_fn_needs_a_network():
    with pytest.raises(ValueError, match="at least one of its networks"):
        model_fns.model_fn_of(canned.RegressionHead(), [None])
