"""What one train() call assembles: tf.estimator's default hooks from the RunConfig, in its order, and a
CheckpointSaverHook of another directory refused."""

import pytest

import common
from common import hooks
from common.estimator.training_run import default_hooks
from tests import models


def test_the_default_hooks_follow_the_run_config():
    config = common.RunConfig(log_step_count_steps=10, save_summary_steps=5)
    kinds = [type(h) for h in default_hooks(config, steps=None, max_steps=100, batch_size=32)]
    assert kinds == [hooks.StopAtStepHook, hooks.NanTensorHook, hooks.StepCounterHook, hooks.LoggingTensorHook,
                     hooks.ProgressHook, hooks.SummarySaverHook]  # (the step rate logged before the loss, as TF's)
    quiet = common.RunConfig(log_step_count_steps=None, save_summary_steps=0)
    assert [type(h) for h in default_hooks(quiet, steps=None, max_steps=None, batch_size=None)] == \
        [hooks.NanTensorHook]


def test_a_checkpoint_saver_of_another_directory_is_refused_before_writing(tmp_path):
    features, labels = models.blobs(32)
    est = common.Estimator(models.classifier_fn, str(tmp_path / "model"), params={"hidden": 4})
    saver = hooks.CheckpointSaverHook(checkpoint_dir=str(tmp_path / "elsewhere"), save_steps=1)
    with pytest.raises(ValueError, match="checkpoints go to the estimator's model_dir"):
        est.train(models.train_input(features, labels, 16), steps=1, hooks=[saver])
    assert not (tmp_path / "elsewhere").exists()


def test_a_hook_raising_in_end_still_leaves_the_final_checkpoint(tmp_path):
    """train(steps=25) saving every 10: tf.estimator 2.15 kept model.ckpt-25 when a hook's end() raised."""
    class FailsAtEnd(hooks.Hook):
        def end(self, step, context):
            raise OSError("the hook's upload failed")

    features, labels = models.blobs(32)
    model_dir = tmp_path / "model"
    est = common.Estimator(models.classifier_fn, str(model_dir), params={"hidden": 4},
                           config=common.RunConfig(save_checkpoints_steps=10))
    with pytest.raises(OSError, match="the hook's upload failed"):
        est.train(models.train_input(features, labels, 16), steps=25, hooks=[FailsAtEnd()])
    assert est.latest_checkpoint().endswith("model.ckpt-25")


def test_the_specs_chief_hooks_run_on_the_chief(tmp_path):
    class Counts(hooks.Hook):
        steps = 0

        def after_step(self, step, values, context):
            Counts.steps = step

    def model_fn(features, labels, mode, params):
        spec = models.classifier_fn(features, labels, mode, params)
        return spec._replace(training_chief_hooks=(Counts(),)) if mode == common.ModeKeys.TRAIN else spec

    features, labels = models.blobs(32)
    est = common.Estimator(model_fn, str(tmp_path), params={"hidden": 4})
    est.train(models.train_input(features, labels, 16), steps=3)
    assert Counts.steps == 3
