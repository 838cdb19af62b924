"""tf.compat.v1.estimator's premade estimators: TF1's default learning rates, the same models."""

import inspect

import numpy as np
import pytest
import tensorflow as tf

import common
import common.adapters.session_run_hooks
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


class _Fetches(common.adapters.session_run_hooks.SessionRunHook):
    def __init__(self, names):
        self.names, self.seen = names, []

    def before_run(self, run_context):
        return common.adapters.session_run_hooks.SessionRunArgs(self.names)

    def after_run(self, run_context, run_values):
        self.seen.append({k: float(v) for k, v in run_values.results.items()})


def _binary_input():
    x = np.random.RandomState(0).rand(32).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, (x > 0.5).astype(np.int32))).batch(8)


@pytest.mark.parametrize("make, scope, tf215", [
    (v1.LinearClassifier, "linear/", [(0.6931472, 5.5451775), (0.64077437, 5.126195)]),
    (v1.LinearRegressor, "linear/", [(0.75, 6.0), (0.28530574, 2.282446)]),
    (lambda columns, model_dir: v1.DNNClassifier([4], columns, model_dir=model_dir), "dnn/", None),
    (lambda columns, model_dir: v1.DNNLinearCombinedClassifier(
        model_dir=model_dir, linear_feature_columns=columns, dnn_feature_columns=columns, dnn_hidden_units=[4]),
     "", None)])
def test_tf1s_head_losses_are_fetched_by_tf1s_graph_names(tmp_path, make, scope, tf215):
    """The official wide_deep's LoggingTensorHook({"average_loss": "linear/head/truediv", "loss":
    "linear/head/weighted_loss/Sum"}); the numbers are TF 2.15's tf.compat.v1.estimator's (2026-11-26)."""
    hook = _Fetches({"average": f"{scope}head/truediv", "summed": f"{scope}head/weighted_loss/Sum"})
    make([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path)).train(_binary_input, hooks=[hook],
                                                                                  steps=2)
    assert [s["summed"] for s in hook.seen] == pytest.approx([8 * s["average"] for s in hook.seen], rel=1e-5)
    if tf215:
        assert [(s["average"], s["summed"]) for s in hook.seen] == [pytest.approx(t, rel=1e-5) for t in tf215]


def test_a_mean_reduced_heads_loss_is_fetched_by_tf1s_name_for_it(tmp_path):
    """TF1 named a head's loss reduced otherwise than summed "<scope>head/weighted_loss/value" (MovieLens)."""
    hook = _Fetches({"reduced": "dnn/head/weighted_loss/value", "average": "dnn/head/truediv"})
    v1.DNNClassifier([4], [tf.feature_column.numeric_column("x")], model_dir=str(tmp_path),
                     loss_reduction=tf.compat.v1.losses.Reduction.MEAN).train(_binary_input, hooks=[hook], steps=2)
    assert [s["reduced"] for s in hook.seen] == pytest.approx([s["average"] for s in hook.seen], rel=1e-5)
