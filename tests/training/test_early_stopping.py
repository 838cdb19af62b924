"""Early-stopping hooks: the rules on written eval results, and a run stopped at the evaluation that triggers."""

import logging
import os

import pytest
import tensorflow as tf

import common
from common.state import summaries
from common.training import early_stopping
from tests import models

FEATURES, LABELS = models.blobs(96)


class FakeEstimator:
    def __init__(self, model_dir):
        self.model_dir = model_dir

    def eval_dir(self, name=None):
        return os.path.join(self.model_dir, "eval")


def _write_evals(model_dir, results):
    writer = tf.summary.create_file_writer(os.path.join(model_dir, "eval"))
    for step, values in results.items():
        summaries.write_scalars(writer, step, values)
    writer.close()


def _fires(hook, model_dir):
    context = common.hooks.RunContext(model_dir, ("loss",))
    hook.begin(context)
    hook.after_step(1, {}, context)
    return context.stop_requested


LOSSES = {10: {"loss": 1.0, "accuracy": 0.5}, 20: {"loss": 0.5, "accuracy": 0.7}, 30: {"loss": 0.6, "accuracy": 0.9},
          40: {"loss": 0.7, "accuracy": 0.8}}


@pytest.mark.parametrize("make, stops", [
    (lambda est: early_stopping.stop_if_no_decrease_hook(est, "loss", 20, run_every_steps=1), True),  # 40 - 20
    (lambda est: early_stopping.stop_if_no_decrease_hook(est, "loss", 21, run_every_steps=1), False),
    (lambda est: early_stopping.stop_if_no_decrease_hook(est, "loss", 10, min_steps=30, run_every_steps=1), True),
    (lambda est: early_stopping.stop_if_no_increase_hook(est, "accuracy", 10, run_every_steps=1), True),  # 40 - 30
    (lambda est: early_stopping.stop_if_no_increase_hook(est, "accuracy", 11, run_every_steps=1), False),
    (lambda est: early_stopping.stop_if_higher_hook(est, "accuracy", 0.85, run_every_steps=1), True),
    (lambda est: early_stopping.stop_if_higher_hook(est, "accuracy", 0.85, min_steps=31, run_every_steps=1), False),
    (lambda est: early_stopping.stop_if_lower_hook(est, "loss", 0.5, run_every_steps=1), False),
    (lambda est: early_stopping.stop_if_lower_hook(est, "loss", 0.55, run_every_steps=1), True),
])
def test_each_rule_reads_the_eval_results_as_tf_estimator_did(tmp_path, make, stops):
    _write_evals(str(tmp_path), LOSSES)
    assert early_stopping.read_eval_metrics(str(tmp_path / "eval"))[30] == pytest.approx(LOSSES[30])
    assert _fires(make(FakeEstimator(str(tmp_path))), str(tmp_path)) is stops


def test_a_missing_metric_or_rule_is_an_error_naming_it(tmp_path):
    _write_evals(str(tmp_path), LOSSES)
    hook = early_stopping.stop_if_higher_hook(FakeEstimator(str(tmp_path)), "auc", 0.9, run_every_steps=1)
    with pytest.raises(ValueError, match=r"global step 10 .* has no metric 'auc' \(it has accuracy, loss\)"):
        _fires(hook, str(tmp_path))
    with pytest.raises(ValueError, match="max steps without decrease must be >= 0, got -1"):
        early_stopping.stop_if_no_decrease_hook(FakeEstimator(str(tmp_path)), "loss", -1)


def test_training_stops_at_the_first_boundary_after_the_evaluation_that_triggers(tmp_path, caplog):
    """The score peaks at step 20; evaluations at 10, 20, 30, 40: at 40 it has not risen for 20 steps."""
    est = common.Estimator(models.scored_fn(20), str(tmp_path), params={"hidden": 4},
                           config=common.RunConfig(save_checkpoints_steps=10))
    stop = early_stopping.stop_if_no_increase_hook(est, "score", 20, run_every_steps=1)
    with caplog.at_level(logging.INFO):
        results, _ = common.train_and_evaluate(
            est, common.TrainSpec(models.train_input(FEATURES, LABELS, 16), max_steps=200, hooks=[stop]),
            common.EvalSpec(models.eval_input(FEATURES, LABELS, 32), steps=None, throttle_secs=0))
    assert results["global_step"] == 41 and est.latest_checkpoint().endswith("model.ckpt-41")
    assert 'No increase in metric "score" for 20 steps (best 0.0 at step 20)' in caplog.text
    assert "Requesting early stopping at global step 41" in caplog.text
    assert sorted(early_stopping.read_eval_metrics(est.eval_dir())) == [10, 20, 30, 40, 41]
