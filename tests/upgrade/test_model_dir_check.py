"""--check_model_dir's report on each kind of model dir (the command itself: tests/upgrade/test_cli.py)."""

import os

import common
from common.upgrade import model_dir_check
from tests import models

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf215_model_dirs")


def test_a_tf1_custom_model_dirs_slots_are_grouped_and_rollback_promised():
    lines = model_dir_check.report(os.path.join(DATA, "custom_tf1", "model"))
    assert lines[1] == "written by tf.estimator"
    assert "  4 a TF1 optimizer's slots and accumulators: read as they are: hidden/b/Momentum, hidden/w/Momentum, " \
           "logits/bias/Momentum, logits/kernel/Momentum" in lines
    assert lines[-1].endswith("tf.estimator 2.15 can take the dir back")


def test_the_projects_own_model_dir_is_read_as_it_is(tmp_path):
    features, labels = models.blobs(16)
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 2})
    est.train(models.one_batch(features, labels, 8), steps=1)
    assert model_dir_check.report(str(tmp_path))[1] == \
        "written by this project: it resumes, evaluates, predicts and exports as it is"
