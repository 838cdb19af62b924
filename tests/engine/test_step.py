"""One step over all towers on real logical CPU devices: equal to one tower, BN statistics, dropout, XLA towers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.jobs import schedules
from common.state import summaries
from tests import models

FEATURES, LABELS = models.blobs(256)


def model_values(est):
    return {n: est.get_variable_value(n) for n in est.get_variable_names() if n.startswith("net/")}


@pytest.mark.parametrize("num_towers,strategy", [(2, "CPU"), (4, "CPU"), (2, "GPU"), (4, "GPU")])
def test_towers_step_equals_one_tower_step(tmp_path, num_towers, strategy):
    single = models.tower_estimator(tmp_path / "one", 1)
    single.train(models.one_batch(FEATURES, LABELS), steps=3)
    multi = models.tower_estimator(tmp_path / "many", num_towers, strategy)
    multi.train(models.one_batch(FEATURES, LABELS), steps=3)
    expected = model_values(single)
    for name, value in model_values(multi).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_each_tower_runs_on_its_device(tmp_path):
    log = models.SharedLog()
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8, "trace_log": log},
                           config=common.RunConfig(device_plan=models.plan(4)))
    est.train(models.one_batch(FEATURES, LABELS), steps=1)
    step_devices = [device for mode, device in log[-4:]]
    assert step_devices == [f"/device:CPU:{i}" for i in range(4)]


def test_eval_and_predict_over_towers_match_one_tower(tmp_path):
    models.tower_estimator(tmp_path, 1).train(models.one_batch(FEATURES, LABELS), steps=5)
    one, four = models.tower_estimator(tmp_path, 1), models.tower_estimator(tmp_path, 4)
    eval_input = models.eval_input(FEATURES, LABELS, 50)  # last batch: 6 examples
    results_one, results_four = one.evaluate(eval_input), four.evaluate(eval_input)
    assert results_four["accuracy"] == pytest.approx(results_one["accuracy"], abs=1e-12)
    assert results_four["loss"] == pytest.approx(results_one["loss"], rel=1e-6)
    predicted_one = [p["classes"] for p in one.predict(eval_input)]
    predicted_four = [p["classes"] for p in four.predict(models.eval_input(FEATURES, LABELS, 3))]
    assert len(predicted_four) == 256
    assert predicted_four == predicted_one


def test_batch_norm_statistics_are_the_mean_of_the_towers(tmp_path):
    x = FEATURES[:32]
    est = models.tower_estimator(tmp_path, 2, hidden=0, batch_norm=True)
    est.train(models.one_batch(FEATURES, LABELS), steps=1)
    momentum = 0.99  # Keras BatchNormalization's default
    shards = np.split(x, 2)
    expected_mean = (1 - momentum) * x.mean(axis=0)
    expected_var = momentum + (1 - momentum) * np.mean([s.var(axis=0) for s in shards], axis=0)
    np.testing.assert_allclose(est.get_variable_value("net/classifier/bn/moving_mean"), expected_mean, rtol=1e-4)
    np.testing.assert_allclose(est.get_variable_value("net/classifier/bn/moving_variance"), expected_var, rtol=1e-4)


def test_dropout_differs_between_towers(tmp_path):
    est = models.tower_estimator(tmp_path, 2, hidden=16, dropout=0.5)
    est.train(models.one_batch(FEATURES, LABELS), steps=2)
    state = est.get_variable_value("net/seed_generator/seed_generator_state")
    # two steps, two towers: the seed generator advanced once per tower per step
    assert state[1] == 4


def test_xla_compiled_step_trains_like_the_plain_step(tmp_path):
    runs = {}
    for jit in (False, True):
        config = common.RunConfig(tf_random_seed=5, jit_compile=jit)
        est = common.Estimator(models.classifier_fn, str(tmp_path / str(jit)), params={"hidden": 8}, config=config)
        est.train(models.one_batch(FEATURES, LABELS), steps=3)
        runs[jit] = model_values(est)
    assert runs[True].keys() == runs[False].keys()
    for name, value in runs[True].items():
        np.testing.assert_allclose(value, runs[False][name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_compiled_towers_train_like_plain_towers(tmp_path, strategy):
    runs = {}
    for jit in (False, True):
        config = common.RunConfig(tf_random_seed=5, jit_compile=jit, device_plan=models.plan(2, strategy))
        est = common.Estimator(models.classifier_fn, str(tmp_path / str(jit)),
                               params={"hidden": 8, "batch_norm": True}, config=config)
        est.train(models.one_batch(FEATURES, LABELS), steps=3)
        runs[jit] = model_values(est)
    assert "net/classifier/bn/moving_mean" in runs[True]
    for name, value in runs[True].items():
        np.testing.assert_allclose(value, runs[False][name], rtol=1e-4, atol=1e-6, err_msg=name)


def test_compiled_towers_see_the_global_step(tmp_path):
    schedule = schedules.piecewise_constant([2, 4], [0.1, 0.01, 0.001])
    config = common.RunConfig(jit_compile=True, device_plan=models.plan(2), save_summary_steps=1)
    est = common.Estimator(models.classifier_fn, str(tmp_path), config=config,
                           params={"hidden": 8, "learning_rate_schedule": schedule})
    est.train(models.one_batch(FEATURES, LABELS), steps=6)
    logged = summaries.read_scalars(str(tmp_path))["learning_rate"]
    # the rate a step reports is the schedule at the global step it starts from
    assert [step for step, _ in logged] == [1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose([rate for _, rate in logged], [0.1, 0.1, 0.1, 0.01, 0.01, 0.001], rtol=1e-6)


def test_compiled_towers_draw_different_dropout_masks(tmp_path):
    """Two compiled towers on two copies of one shard differ from one tower on it only
    if their masks differ; the seed state keeps tower 0's advance (one per step)."""
    shard_x, shard_y = FEATURES[:16], LABELS[:16]
    copies = (np.concatenate([shard_x, shard_x]), np.concatenate([shard_y, shard_y]))
    results = {}
    for num_towers, batch in ((1, (shard_x, shard_y)), (2, copies)):
        config = common.RunConfig(tf_random_seed=5, jit_compile=True, device_plan=models.plan(num_towers))
        for dropout in (0.0, 0.5):
            est = common.Estimator(models.classifier_fn, str(tmp_path / f"{num_towers}_{dropout}"),
                                   params={"hidden": 16, "dropout": dropout}, config=config)
            est.train(lambda: tf.data.Dataset.from_tensors(batch).repeat(), steps=2)
            results[num_towers, dropout] = model_values(est)
    kernel = "net/classifier/hidden/kernel"
    np.testing.assert_allclose(results[2, 0.0][kernel], results[1, 0.0][kernel], rtol=1e-5, atol=1e-6)
    assert np.abs(results[2, 0.5][kernel] - results[1, 0.5][kernel]).max() > 1e-3
    assert results[2, 0.5]["net/seed_generator/seed_generator_state"][1] == 2


def test_compiled_towers_need_keras_variables(tmp_path):
    def model_fn(features, labels, mode):
        scale = common.get_module("scale", lambda: tf.Module(name="scale"))
        if not hasattr(scale, "weight"):
            scale.weight = tf.Variable(1.0, name="weight")
        loss = tf.reduce_mean(tf.square(scale.weight * features - tf.cast(labels, tf.float32)[:, None]))
        return common.EstimatorSpec(mode, loss=loss,
                                    optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.1)))

    config = common.RunConfig(jit_compile=True, device_plan=models.plan(2))
    est = common.Estimator(model_fn, str(tmp_path), config=config)
    with pytest.raises(ValueError, match=r"scale/weight is a plain tf.Variable; .* without --jit_compile"):
        est.train(models.one_batch(FEATURES, LABELS), steps=1)
    common.Estimator(model_fn, str(tmp_path / "plain"), config=config.replace(jit_compile=False)).train(
        models.one_batch(FEATURES, LABELS), steps=1)


def _unconnected_fn(optimizer_kind):
    def model_fn(features, labels, mode, params):
        net = common.get_module("net", lambda: keras.layers.Dense(3, name="logits"))
        net(features)  # the model exists, but the loss below does not use it
        loss = tf.reduce_mean(tf.cast(labels, tf.float32))
        if optimizer_kind == "spec":
            return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(
                lambda: keras.optimizers.SGD(0.1)))
        optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(0.1))
        with tf.GradientTape() as tape:
            tape_loss = tf.reduce_mean(tf.cast(labels, tf.float32))
        grads = tape.gradient(tape_loss, net.trainable_variables)  # [None, None]
        return common.EstimatorSpec(mode, loss=loss, train_op=optimizer.apply_gradients(
            zip(grads, net.trainable_variables)))
    return model_fn


@pytest.mark.parametrize("optimizer_kind", ["spec", "keras_apply_gradients"])
def test_a_loss_that_depends_on_no_variable_is_refused_before_any_step(tmp_path, optimizer_kind):
    est = common.Estimator(_unconnected_fn(optimizer_kind), str(tmp_path), config=common.RunConfig(
        device_plan=models.plan(2)))
    expected = (r"No gradients provided for any variable: model_fn's loss depends on none of the 2 variables it "
                r"trains \(net/logits/kernel, net/logits/bias\)" if optimizer_kind == "spec"
                else r"No gradients provided for any variable")  # Keras's apply_gradients says it itself
    with pytest.raises(ValueError, match=expected):
        est.train(models.one_batch(FEATURES, LABELS), steps=3)
    assert est.latest_checkpoint() is None or est.latest_checkpoint().endswith("model.ckpt-0")
