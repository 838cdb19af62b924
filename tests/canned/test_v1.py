"""tf.compat.v1.estimator's premade estimators: TF1's default learning rates, the same models."""

import inspect

import numpy as np

from common import canned
from common.canned import v1
from tests.canned import reference


def test_tf1s_linear_rate_is_capped_by_the_column_count(tmp_path):
    a, b, c = reference.columns()
    assert v1.LinearClassifier.rates.linear(100) == 0.1 and canned.LinearClassifier.rates.linear(100) == 0.2
    assert v1.DNNClassifier.rates.dnn == 0.05 and canned.DNNClassifier.rates.dnn == 0.001
    steps = {}
    for flavour in (canned, v1):  # (the loss reduced alike: the rates alone differ)
        estimator = flavour.DNNRegressor([3], [a, b], model_dir=str(tmp_path / flavour.__name__),
                                         loss_reduction="sum_over_batch_size",
                                         warm_start_from=reference.write_initial_checkpoint(
                                             "dnnreg", str(tmp_path / flavour.__name__ / "start" / "ckpt-0")))
        estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=1)
        steps[flavour] = estimator.get_variable_value("dnn/logits/bias") - \
            np.array(reference.CASES["dnnreg"]["initial"]["dnn/logits/bias"])
    np.testing.assert_allclose(steps[v1], 50 * steps[canned], rtol=1e-4)  # Adagrad's first step: rate times sign


def test_tf1s_classifiers_and_regressors_sum_their_loss_by_default():
    a, b, c = reference.columns()
    assert v1.DNNLinearCombinedClassifier(linear_feature_columns=[c]).head._loss_reduction == "sum"
    assert v1.BaselineRegressor().head._loss_reduction == "sum"
    assert v1.LinearClassifier([a], None, 2, None, None, "Ftrl", None, None, None,
                               "sum_over_batch_size").head._loss_reduction == "sum_over_batch_size"  # (positional)
    assert canned.DNNLinearCombinedClassifier(linear_feature_columns=[c]).head._loss_reduction == \
        "sum_over_batch_size"
    assert inspect.signature(v1.DNNClassifier).parameters["loss_reduction"].default == "sum"
    assert v1.LinearClassifier([a]).head.auc_summation == "trapezoidal"
    assert canned.LinearClassifier([a]).head.auc_summation == "interpolation"


def test_a_loss_summed_over_the_batch_takes_batch_size_times_the_step(tmp_path):
    a, b, _ = reference.columns()
    steps = {}
    for flavour in (canned, v1):
        estimator = flavour.LinearRegressor([a, b], model_dir=str(tmp_path / flavour.__name__), optimizer="SGD")
        estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=1)
        steps[flavour] = estimator.get_variable_value("linear/linear_model/bias_weights")
    np.testing.assert_allclose(steps[v1], 8 * steps[canned], rtol=1e-5)  # batch 8, from zero weights
