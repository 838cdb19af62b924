"""What each mode restores: training all state (or a warm start on a fresh model_dir), the other modes the
model's variables and the global step."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.engine.model_builder import ModelBuilder
from common.estimator.model_state import ModelState
from common.spec.model_fn import ModeKeys
from common.state.checkpoint_store import CheckpointStore
from common.state.warm_start import WarmStartSettings
from tests import models

FEATURES, LABELS = models.blobs(64)


def trained_dir(tmp_path, steps=3):
    est = common.Estimator(models.classifier_fn, str(tmp_path / "trained"), params={"hidden": 4},
                           config=common.RunConfig(tf_random_seed=1))
    est.train(models.train_input(FEATURES, LABELS, 16), steps=steps)
    return est


def built_state(model_dir, warm_start=None, is_chief=True):
    config = common.RunConfig(model_dir=str(model_dir), tf_random_seed=2)
    builder = ModelBuilder(models.classifier_fn, {"hidden": 4}, config)
    builder.probe_dataset(ModeKeys.TRAIN, models.train_input(FEATURES, LABELS, 16)())
    return builder, ModelState(builder, CheckpointStore(str(model_dir)), warm_start, is_chief)


def test_training_restores_everything_and_the_other_modes_the_model_and_step(tmp_path):
    trained = trained_dir(tmp_path)
    builder, state = built_state(tmp_path / "trained")
    assert state.restore(ModeKeys.EVAL) == trained.latest_checkpoint()
    assert int(builder.global_step.numpy()) == 3
    values = trained.variable_values()
    for name, variable in builder.named_state(with_optimizer=False).items():
        np.testing.assert_array_equal(variable.numpy(), values[name], err_msg=name)
    assert state.restore(ModeKeys.TRAIN) == trained.latest_checkpoint()


def test_a_fresh_model_dir_warm_starts_training_on_the_chief_only(tmp_path):
    trained = trained_dir(tmp_path)
    kernel = trained.variable_values()["net/classifier/hidden/kernel"]
    settings = WarmStartSettings(trained.model_dir, "net/classifier/hidden/")
    builder, state = built_state(tmp_path / "fresh", settings)
    assert state.restore(ModeKeys.TRAIN) is None
    np.testing.assert_array_equal(builder.named_state(False)["net/classifier/hidden/kernel"].numpy(), kernel)
    assert int(builder.global_step.numpy()) == 0
    worker, worker_state = built_state(tmp_path / "worker", settings, is_chief=False)
    assert worker_state.restore(ModeKeys.TRAIN) is None
    assert not np.array_equal(worker.named_state(False)["net/classifier/hidden/kernel"].numpy(), kernel)


def test_evaluating_an_untrained_model_says_so(tmp_path, caplog):
    _, state = built_state(tmp_path / "empty")
    assert state.restore(ModeKeys.PREDICT) is None
    assert "Could not find trained model in model_dir" in caplog.text
    assert "running initialization to predict" in caplog.text
    with pytest.raises(common.CheckpointDamagedError, match="model.ckpt-1 cannot be read"):
        state.restore(ModeKeys.EVAL, checkpoint_path=str(tmp_path / "absent" / "model.ckpt-1"))


def test_metric_state_an_earlier_version_saved_as_model_variables_is_left_unread(tmp_path):
    def model_fn(features, labels, mode, params):  # TensorFlow's own TF1 metric: its total and count
        spec = models.classifier_fn(features, labels, mode, params)
        accuracy = tf.compat.v1.metrics.accuracy(labels, spec.predictions["classes"])
        return spec._replace(eval_metric_ops={"tf_accuracy": accuracy})

    est = common.Estimator(model_fn, str(tmp_path), params={"hidden": 4})
    est.train(models.train_input(FEATURES, LABELS, 16), steps=2)
    path = est.latest_checkpoint()
    reader = tf.train.load_checkpoint(path)
    with tf.Graph().as_default():  # the checkpoint as this project wrote it when it saved them as the model's
        saved = {name: tf.compat.v1.Variable(reader.get_tensor(name), name="v") for name in
                 reader.get_variable_to_shape_map()}
        saved.update({"model_fn/total": tf.compat.v1.Variable(9.0), "model_fn/count": tf.compat.v1.Variable(9.0)})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver(var_list=saved).save(session, path, write_meta_graph=False,
                                                          write_state=False)
    assert "model_fn/total" in tf.train.load_checkpoint(path).get_variable_to_shape_map()
    assert 0 <= est.evaluate(models.eval_input(FEATURES, LABELS, 16))["tf_accuracy"] <= 1
    est.train(models.train_input(FEATURES, LABELS, 16), steps=1)
    assert est.get_variable_value("global_step") == 3
    assert "model_fn/total" not in tf.train.load_checkpoint(est.latest_checkpoint()).get_variable_to_shape_map()
