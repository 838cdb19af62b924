"""Estimator: resume, evaluate, predict, export, summaries, warm start, errors."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common import hooks
from common.state import checkpoints, summaries
from tests import models

FEATURES, LABELS = models.blobs(256)


def make_estimator(model_dir, params=None, **config):
    config.setdefault("save_checkpoints_steps", 10)
    config.setdefault("tf_random_seed", 7)
    return common.Estimator(models.classifier_fn, str(model_dir),
                            config=common.RunConfig(**config), params=dict(params or {"hidden": 8}))


def one_batch_input(batch_size=32):
    """The same batch at every step, so a resumed run sees what a straight one sees."""
    x, y = FEATURES[:batch_size], LABELS[:batch_size]
    return lambda: tf.data.Dataset.from_tensors((x, y)).repeat()


def test_resume_continues_weights_and_optimizer_slots(tmp_path):
    straight = make_estimator(tmp_path / "straight")
    straight.train(one_batch_input(), steps=40)

    first = make_estimator(tmp_path / "resumed")
    first.train(one_batch_input(), steps=20)
    momentum_at_20 = first.get_variable_value("optimizer/classifier_hidden_kernel_momentum")
    assert np.abs(momentum_at_20).sum() > 0
    second = make_estimator(tmp_path / "resumed")
    second.train(one_batch_input(), max_steps=40)

    assert second.get_variable_value("global_step") == 40
    for name in straight.get_variable_names():
        np.testing.assert_allclose(second.get_variable_value(name),
                                   straight.get_variable_value(name), rtol=1e-5, atol=1e-6)
    assert sorted(os.path.basename(p) for p in tf.io.gfile.glob(str(tmp_path / "resumed" / "*.index"))) == [
        "model.ckpt-0.index", "model.ckpt-10.index", "model.ckpt-20.index",
        "model.ckpt-30.index", "model.ckpt-40.index"]


def test_saves_fall_on_multiples_of_the_period_whatever_the_loop_length(tmp_path):
    estimator = make_estimator(tmp_path, save_checkpoints_steps=4, steps_per_loop=3)
    estimator.train(one_batch_input(), steps=10)
    assert sorted(int(p.split("-")[-1][:-len(".index")]) for p in tf.io.gfile.glob(str(tmp_path / "*.index"))) == [
        0, 4, 8, 10]


def test_resume_removes_what_a_killed_save_left(tmp_path):
    make_estimator(tmp_path).train(one_batch_input(), steps=2)
    partial = tmp_path / "model.ckpt-7_temp"
    partial.mkdir()
    (partial / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"half a checkpoint")
    (tmp_path / "notes_temp").mkdir()
    make_estimator(tmp_path).train(one_batch_input(), steps=2)
    assert not partial.exists()
    assert (tmp_path / "notes_temp").exists()  # only checkpoint leftovers are ours to remove


def test_max_steps_already_reached_skips_training(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(one_batch_input(), max_steps=5)
    before = estimator.get_variable_value("net/classifier/logits/kernel")
    estimator.train(one_batch_input(), max_steps=5)
    np.testing.assert_array_equal(estimator.get_variable_value("net/classifier/logits/kernel"), before)
    assert estimator.get_variable_value("global_step") == 5


def test_training_stops_when_input_runs_out(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(models.train_input(FEATURES, LABELS, 32, repeat=False))
    assert estimator.get_variable_value("global_step") == 256 // 32


def test_evaluate_predict_and_export_agree(tmp_path):
    estimator = make_estimator(tmp_path, steps_per_loop=5)
    estimator.train(models.train_input(FEATURES, LABELS, 32), steps=60)

    results = estimator.evaluate(models.eval_input(FEATURES, LABELS, 50))
    assert results["global_step"] == 60
    assert set(results) == {"accuracy", "loss", "global_step"}
    predictions = list(estimator.predict(models.eval_input(FEATURES, LABELS, 50)))
    assert len(predictions) == 256
    assert set(predictions[0]) == {"classes", "probabilities"}
    classes = np.array([p["classes"] for p in predictions])
    assert results["accuracy"] == pytest.approx(np.mean(classes == LABELS))
    assert results["accuracy"] > 0.9

    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4], tf.float32))
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver)
    assert os.listdir(tmp_path / "export") == [os.path.basename(export_dir)]
    served = tf.saved_model.load(export_dir).signatures["serving_default"](features=tf.constant(FEATURES[:10]))
    np.testing.assert_array_equal(served["classes"].numpy(), classes[:10])
    np.testing.assert_allclose(served["probabilities"].numpy(),
                               np.stack([p["probabilities"] for p in predictions[:10]]), rtol=1e-5)

    only = list(estimator.predict(models.eval_input(FEATURES[:3], LABELS[:3], 2), predict_keys=["classes"]))
    assert [set(p) for p in only] == [{"classes"}] * 3
    with pytest.raises(ValueError, match="predict_keys"):
        list(estimator.predict(models.eval_input(FEATURES[:3], LABELS[:3], 2), predict_keys=["nope"]))


def test_event_files_hold_the_training_and_eval_scalars(tmp_path):
    estimator = make_estimator(tmp_path, save_summary_steps=5, log_step_count_steps=5)
    estimator.train(models.train_input(FEATURES, LABELS, 32), steps=20,
                    hooks=[hooks.ExamplesPerSecondHook(32, every_n_steps=5)])
    estimator.evaluate(models.eval_input(FEATURES, LABELS, 64), name="holdout")

    train = summaries.read_scalars(str(tmp_path))
    assert [step for step, _ in train["loss"]] == [1, 6, 11, 16]  # as tf.estimator's: the first step, then every 5
    assert [step for step, _ in train["global_step/sec"]] == [6, 11, 16]
    assert {"learning_rate", "batch_accuracy", "global_step/sec", "examples/sec"} <= set(train)
    assert all(value == pytest.approx(0.1) for _, value in train["learning_rate"])
    held_out = summaries.read_scalars(str(tmp_path / "eval_holdout"))
    assert set(held_out) == {"accuracy", "loss", "checkpoint_path"}
    assert held_out["accuracy"][0][0] == 20
    assert held_out["checkpoint_path"] == [(20, os.path.join(str(tmp_path), "model.ckpt-20").encode())]


def test_nan_loss_stops_with_the_step_and_keeps_last_good_checkpoint(tmp_path):
    poisoned = FEATURES[:32 * 12].copy()
    poisoned[32 * 7:32 * 8] = np.nan  # the 8th batch
    estimator = make_estimator(tmp_path, save_checkpoints_steps=5, steps_per_loop=3)
    with pytest.raises(hooks.NanLossDuringTrainingError, match="global step 8"):
        estimator.train(models.train_input(poisoned, LABELS[:32 * 12], 32), steps=12)
    latest = estimator.latest_checkpoint()
    assert latest.endswith("model.ckpt-5")
    assert np.isfinite(checkpoints.read_variable(latest, "net/classifier/logits/kernel")).all()
    fresh = make_estimator(tmp_path, params={"hidden": 8, "learning_rate": 0.01})
    fresh.train(models.train_input(FEATURES, LABELS, 32), steps=3)
    assert fresh.get_variable_value("global_step") == 8


def test_a_finite_loss_with_nan_gradients_stops_like_a_nan_loss(tmp_path):
    def model_fn(features, labels, mode):
        scale = common.get_module("scale", lambda: keras.layers.Dense(1, use_bias=False, kernel_initializer="ones"))
        y = scale(features)
        # y ** 0.5 has a NaN gradient where y < 0: tf.where keeps it out of the loss, not out of the gradient
        loss = tf.reduce_mean(tf.where(y > 0, tf.pow(y, 0.5), tf.zeros_like(y)))
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.1)))

    features = np.array([[1.0], [4.0], [-1.0], [9.0]], np.float32)
    estimator = common.Estimator(model_fn, str(tmp_path), config=common.RunConfig(save_checkpoints_steps=1))
    with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError, match="loss = nan at global step 1"):
        estimator.train(lambda: tf.data.Dataset.from_tensors((features, features)).repeat(), steps=3)
    assert estimator.latest_checkpoint().endswith("model.ckpt-0")
    assert np.isfinite(estimator.get_variable_value("scale/dense/kernel")).all()


def test_warm_start_takes_only_matched_variables(tmp_path):
    source = make_estimator(tmp_path / "source")
    source.train(models.train_input(FEATURES, LABELS, 32), steps=10)
    settings = common.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="net/classifier/hidden/")
    target = common.Estimator(models.classifier_fn, str(tmp_path / "target"), params={"hidden": 8},
                              config=common.RunConfig(tf_random_seed=99), warm_start_from=settings)
    target.train(models.train_input(FEATURES, LABELS, 32), steps=1,
                 hooks=[])  # the step-0 checkpoint holds the warm-started values
    first = checkpoints.resolve(str(tmp_path / "target" / "model.ckpt-0"))
    for name in ("net/classifier/hidden/kernel", "net/classifier/hidden/bias"):
        np.testing.assert_array_equal(checkpoints.read_variable(first, name), source.get_variable_value(name))
    assert not np.allclose(checkpoints.read_variable(first, "net/classifier/logits/kernel"),
                           source.get_variable_value("net/classifier/logits/kernel"))


@pytest.mark.parametrize("compiled_towers", [False, True])
def test_frozen_variables_do_not_move(tmp_path, compiled_towers):
    config = common.RunConfig(tf_random_seed=3)
    if compiled_towers:  # frozen variables spread over both devices, read by each compiled tower
        config = config.replace(jit_compile=True, device_plan=models.plan(2, "GPU"))
    estimator = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8},
                                 config=config, frozen_variables="net/classifier/hidden/")
    estimator.train(models.train_input(FEATURES, LABELS, 32), steps=1)
    start = {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}
    estimator.train(models.train_input(FEATURES, LABELS, 32), steps=10)
    np.testing.assert_array_equal(estimator.get_variable_value("net/classifier/hidden/kernel"),
                                  start["net/classifier/hidden/kernel"])
    assert not np.allclose(estimator.get_variable_value("net/classifier/logits/kernel"),
                           start["net/classifier/logits/kernel"])


def test_model_fn_is_never_allowed_a_second_set_of_variables(tmp_path):
    counted_fn, created = models.counting_variables(models.classifier_fn)

    estimator = common.Estimator(counted_fn, str(tmp_path), params={"hidden": 8, "batch_norm": True},
                                 config=common.RunConfig(device_plan=models.plan(2)))
    estimator.train(models.train_input(FEATURES, LABELS, 32), steps=2)
    after_build = len(created)
    assert after_build == 10  # hidden 2, bn 4, logits 2, optimizer iteration and learning rate
    models.evaluate_predict_export(estimator, FEATURES, LABELS, tmp_path / "export")
    assert len(created) == after_build


def _files(directory):
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else None


def test_bad_input_fails_before_model_dir_is_written(tmp_path):
    model_dir = tmp_path / "model"

    def no_loss_fn(features, labels, mode):
        net = common.get_module("net", lambda: keras.layers.Dense(3))
        return common.EstimatorSpec(mode, predictions=net(features))

    estimator = common.Estimator(no_loss_fn, str(model_dir))
    with pytest.raises(ValueError, match="no loss in TRAIN mode"):
        estimator.train(models.train_input(FEATURES, LABELS, 32), steps=1)
    assert _files(model_dir) is None

    with pytest.raises(ValueError, match="no checkpoint found at .*nowhere"):
        common.Estimator(models.classifier_fn, str(model_dir), warm_start_from=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="both steps and max_steps"):
        make_estimator(model_dir).train(one_batch_input(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="steps > 0"):
        make_estimator(model_dir).train(one_batch_input(), steps=-3)
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        make_estimator(model_dir).train(lambda: (FEATURES, {"labels": object()}), steps=1)  # (tensors are taken)
    assert _files(model_dir) is None


def test_float_steps_train_to_the_first_step_at_or_past_them_as_tf_estimator(tmp_path):
    """TF1 programs computed them (TOTAL_STEPS = SIZE / BATCH * EPOCHS); tf.estimator stopped at the first
    global step >= the number."""
    estimator = make_estimator(tmp_path)
    estimator.train(one_batch_input(), steps=2.5)
    assert estimator.get_variable_value("global_step") == 3
    estimator.train(one_batch_input(), max_steps=20.0)
    assert estimator.get_variable_value("global_step") == 20


def test_checkpoint_of_a_different_model_is_refused_and_left_alone(tmp_path):
    make_estimator(tmp_path, params={"hidden": 8}).train(one_batch_input(), steps=2)
    before = {name: (tmp_path / name).read_bytes() for name in _files(tmp_path) if (tmp_path / name).is_file()}
    other = make_estimator(tmp_path, params={"hidden": 16})
    with pytest.raises(common.CheckpointMismatchError,
                       match=r"net/classifier/hidden/kernel \(checkpoint \[4, 8\], model \[4, 16\]\)"):
        other.train(one_batch_input(), steps=2)
    after = {name: (tmp_path / name).read_bytes() for name in _files(tmp_path) if (tmp_path / name).is_file()}
    assert after == before


def test_train_and_evaluate_with_two_named_evals(tmp_path):
    estimator = make_estimator(tmp_path)
    results, exports = common.train_and_evaluate(
        estimator,
        common.TrainSpec(models.train_input(FEATURES, LABELS, 32), max_steps=30),
        [common.EvalSpec(models.eval_input(FEATURES[:128], LABELS[:128], 32), steps=None, name="a", throttle_secs=0),
         common.EvalSpec(models.eval_input(FEATURES[128:], LABELS[128:], 32), steps=2, name="b", throttle_secs=0)])
    assert set(results) == set(exports) == {"a", "b"} and exports["a"] == []
    assert results["a"]["global_step"] == 30
    steps_a = [s for s, _ in summaries.read_scalars(str(tmp_path / "eval_a"))["accuracy"]]
    assert steps_a == [10, 20, 30]
    assert os.path.isdir(tmp_path / "eval_b")


def test_an_export_without_a_checkpoint_is_refused_unless_asked_for_or_warm_started(tmp_path):
    """tf.estimator 2.15 raised "Couldn't find trained model" and wrote nothing (it exported the warm-start
    checkpoint's model where warm_start_from named one); allow_untrained=True exports the initial model."""
    features, labels = models.blobs(16)
    receiver = common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4]))
    est = common.Estimator(models.classifier_fn, str(tmp_path / "model"), params={"hidden": 4})
    with pytest.raises(ValueError, match="Couldn't find trained model at .*model: no checkpoint to export"):
        est.export_saved_model(str(tmp_path / "export"), receiver)
    assert not (tmp_path / "export").exists() and not (tmp_path / "model").exists()
    untrained = est.export_saved_model(str(tmp_path / "export"), receiver, allow_untrained=True)
    assert tf.saved_model.load(untrained).signatures["serving_default"](tf.constant(features[:2]))

    est.train(models.train_input(features, labels, 8), steps=3)
    warmed = common.Estimator(models.classifier_fn, str(tmp_path / "warmed"), params={"hidden": 4},
                              warm_start_from=str(tmp_path / "model"))
    exported = warmed.export_saved_model(str(tmp_path / "warm_export"), receiver)
    served = tf.saved_model.load(exported).signatures["serving_default"](tf.constant(features[:4]))
    expected = [p["probabilities"] for p in est.predict(models.eval_input(features[:4], labels[:4], 4))]
    np.testing.assert_allclose(served["probabilities"].numpy(), expected, rtol=1e-6)
