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


def test_a_tf1_era_dirs_shards_files_and_per_part_slots_are_named():
    sharded = model_dir_check.report(os.path.join(DATA, "tf1_custom_sharded", "model"))
    assert "  in 3 data files (a sharded Saver's, one per device): read as one checkpoint" in sharded
    assert any(line.startswith("  beside it ") and "graph.pbtxt" in line and "events.out.tfevents." in line
               for line in sharded)
    partitioned = model_dir_check.report(os.path.join(DATA, "tf1_dnn_partitioned", "model"))
    per_part = [line for line in partitioned if "one name per part, joined" in line]
    assert per_part == ["  2 a TF1 optimizer's slots under the variable's partition (a v1 premade's): read as its "
                        "slots; a partitioned variable's, one name per part, joined: dnn/input_from_feature_columns/"
                        "input_layer/item_embedding/embedding_weights/t_0/Adagrad, dnn/input_from_feature_columns/"
                        "input_layer/item_embedding/embedding_weights/t_1/Adagrad"]
    assert any(line.startswith("  7 model variables") for line in partitioned)


def test_a_v1_premades_adam_accumulators_under_its_head_are_optimizer_state():
    lines = model_dir_check.report(os.path.join(DATA, "v1_dnn_regressor_adam", "model"))
    assert "  2 a TF1 optimizer's slots and accumulators: read as they are: dnn/head/beta1_power, " \
           "dnn/head/beta2_power" in lines
    assert any(line.startswith("  4 model variables") for line in lines)


def test_the_projects_own_model_dir_is_read_as_it_is(tmp_path):
    features, labels = models.blobs(16)
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 2})
    est.train(models.one_batch(features, labels, 8), steps=1)
    assert model_dir_check.report(str(tmp_path))[1] == \
        "written by this project: it resumes, evaluates, predicts and exports as it is"
