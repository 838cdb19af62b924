"""Towers on real logical CPU devices: sharding, averaging, placement, BN, errors."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common import multiworker, schedules, summaries, towers
from common.tower_step import TowerStep
from tests import models

FEATURES, LABELS = models.blobs(256)


def one_batch(batch_size=32):
    x, y = FEATURES[:batch_size], LABELS[:batch_size]
    return lambda: tf.data.Dataset.from_tensors((x, y)).repeat()


def estimator(model_dir, num_towers, strategy="CPU", **params):
    params.setdefault("hidden", 8)
    return common.Estimator(models.classifier_fn, str(model_dir), params=params,
                            config=common.RunConfig(tf_random_seed=5, device_plan=models.plan(num_towers, strategy)))


def model_values(est):
    return {n: est.get_variable_value(n) for n in est.get_variable_names() if n.startswith("net/")}


def test_split_batch_keeps_order_and_dict_structure():
    x = np.arange(12, dtype=np.float32).reshape(12, 1)
    shards = towers.split_batch(({"a": x, "b": x * 10}, np.arange(12)), 4)
    assert [labels.numpy().tolist() for _, labels in shards] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert [sorted(features) for features, _ in shards] == [["a", "b"]] * 4
    np.testing.assert_array_equal(shards[2][0]["b"].numpy().ravel(), [60, 70, 80])


def test_split_batch_uneven_only_when_allowed():
    with pytest.raises(ValueError, match="batch of 10 examples cannot be split evenly over 4 towers"):
        towers.split_batch(tf.zeros([10, 2]), 4)
    shards = towers.split_batch(tf.range(10), 4, allow_uneven=True)
    assert [s.numpy().tolist() for s in shards] == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert [s.shape[0] for s in towers.split_batch(tf.range(3), 4, allow_uneven=True)] == [1, 1, 1, 0]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def dynamic(batch):
        return towers.split_batch(batch, 4)

    assert [s.numpy().tolist() for s in dynamic(tf.range(8))] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="multiple of the number of towers"):
        dynamic(tf.range(6))


def test_split_batch_rejects_disagreeing_batch_sizes():
    with pytest.raises(ValueError, match="disagree on the batch size"):
        towers.split_batch((tf.zeros([4, 2]), tf.zeros([6])), 2)


def test_gradients_are_averaged_on_the_variables_device():
    with tf.device("/cpu:1"):
        first = tf.Variable(tf.zeros([3]))
    with tf.device("/cpu:2"):
        second = tf.Variable(tf.zeros([2, 2]))
    tower_grads = []
    for device, scale in (("/cpu:0", 1.0), ("/cpu:3", 3.0)):
        with tf.device(device):
            tower_grads.append([tf.fill([3], scale), tf.fill([2, 2], -scale)])
    averaged = towers.average_gradients(tower_grads, [first, second])
    assert averaged[0].device.endswith("CPU:1")
    assert averaged[1].device.endswith("CPU:2")
    np.testing.assert_allclose(averaged[0].numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(averaged[1].numpy(), -2.0 * np.ones([2, 2]))

    @tf.function
    def traced():
        return towers.average_gradients(tower_grads, [first, second])

    graph = traced.get_concrete_function().graph
    devices = {op.device for op in graph.get_operations() if op.type in ("AddN", "Mul")}
    assert {d.split("/device:")[-1] for d in devices} == {"CPU:1", "CPU:2"}
    assert towers.average_gradients([[None], [None]], [first]) == [None]


@pytest.mark.parametrize("num_towers,strategy", [(2, "CPU"), (4, "CPU"), (2, "GPU"), (4, "GPU")])
def test_towers_step_equals_one_tower_step(tmp_path, num_towers, strategy):
    single = estimator(tmp_path / "one", 1)
    single.train(one_batch(), steps=3)
    multi = estimator(tmp_path / "many", num_towers, strategy)
    multi.train(one_batch(), steps=3)
    expected = model_values(single)
    for name, value in model_values(multi).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_cpu_strategy_puts_variables_and_slots_on_cpu0(tmp_path):
    est = estimator(tmp_path, 2, "CPU", batch_norm=True)
    est.train(one_batch(), steps=1)
    devices = est.variable_devices()
    assert len(devices) > 10
    assert set(devices.values()) == {"/job:localhost/replica:0/task:0/device:CPU:0"}


def test_gpu_strategy_spreads_variables_greedily_with_slots_alongside(tmp_path):
    est = estimator(tmp_path, 4, "GPU", hidden=64, batch_norm=True)
    est.train(one_batch(), steps=1)
    placement = est.variable_placement
    loads = {}
    for name, size, device in placement:
        assert loads.get(device, 0) == min(loads.get(d, 0) for d in ("/cpu:0", "/cpu:1", "/cpu:2", "/cpu:3"))
        loads[device] = loads.get(device, 0) + size
    total, largest = sum(s for _, s, _ in placement), max(s for _, s, _ in placement)
    assert len(loads) == 4
    assert max(loads.values()) <= total / 4 + largest
    devices = est.variable_devices()
    model_devices = {n: d for n, d in devices.items() if n.startswith("net/")}
    assert len(set(model_devices.values())) == 4
    for name, device in model_devices.items():
        slot = "optimizer/" + name[len("net/"):].replace("/", "_") + "_momentum"
        if slot in devices:
            assert devices[slot] == device, slot
    assert sum(1 for n in devices if n.endswith("_momentum")) == 6


def test_each_tower_runs_on_its_device(tmp_path):
    log = []
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8, "trace_log": log},
                           config=common.RunConfig(device_plan=models.plan(4)))
    est.train(one_batch(), steps=1)
    step_devices = [device for mode, device in log[-4:]]
    assert step_devices == [f"/device:CPU:{i}" for i in range(4)]


def test_eval_and_predict_over_towers_match_one_tower(tmp_path):
    estimator(tmp_path, 1).train(one_batch(), steps=5)
    one, four = estimator(tmp_path, 1), estimator(tmp_path, 4)
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
    est = estimator(tmp_path, 2, hidden=0, batch_norm=True)
    est.train(one_batch(), steps=1)
    momentum = 0.99  # Keras BatchNormalization's default
    shards = np.split(x, 2)
    expected_mean = (1 - momentum) * x.mean(axis=0)
    expected_var = momentum + (1 - momentum) * np.mean([s.var(axis=0) for s in shards], axis=0)
    np.testing.assert_allclose(est.get_variable_value("net/classifier/bn/moving_mean"), expected_mean, rtol=1e-4)
    np.testing.assert_allclose(est.get_variable_value("net/classifier/bn/moving_variance"), expected_var, rtol=1e-4)


def test_dropout_differs_between_towers(tmp_path):
    est = estimator(tmp_path, 2, hidden=16, dropout=0.5)
    est.train(one_batch(), steps=2)
    state = est.get_variable_value("net/seed_generator/seed_generator_state")
    # two steps, two towers: the seed generator advanced once per tower per step
    assert state[1] == 4


def test_device_plan_checks_name_the_flag_and_numbers():
    with pytest.raises(towers.DevicePlanError, match="--num_gpus=-1 must be >= 0"):
        towers.make_device_plan(-1, "CPU")
    with pytest.raises(towers.DevicePlanError, match=r"--num_gpus=2 but this machine has 0 GPU\(s\)"):
        towers.make_device_plan(2, "CPU")
    with pytest.raises(towers.DevicePlanError, match="--variable_strategy=GPU needs GPU towers"):
        towers.make_device_plan(0, "GPU")
    with pytest.raises(towers.DevicePlanError, match="--variable_strategy='TPU' is not one of CPU, GPU"):
        towers.make_device_plan(0, "TPU")
    with pytest.raises(towers.DevicePlanError, match="--cpu_towers=8 but only 4 logical CPU"):
        towers.make_device_plan(0, "CPU", cpu_towers=8)
    with pytest.raises(towers.DevicePlanError,
                       match=r"--train_batch_size=100 must be a multiple of the number of towers \(3\)"):
        towers.check_batch_size(100, 3, "train_batch_size")
    plan = towers.make_device_plan(0, "GPU", cpu_towers=2)
    assert plan.tower_devices == ("/cpu:0", "/cpu:1")
    assert plan.consolidation_device == "/cpu:0" and plan.variable_devices == ("/cpu:0", "/cpu:1")


def test_xla_compiles_the_step_on_one_device_and_each_tower_over_several():
    one_gpu = towers.DevicePlan(("/gpu:0",), "GPU")
    two_gpus = towers.DevicePlan(("/gpu:0", "/gpu:1"), "GPU")
    assert one_gpu.compiled_unit(None) == towers.STEP
    assert one_gpu.compiled_unit(False) is None
    assert towers.DevicePlan(("/gpu:0",), "CPU").compiled_unit(None) is None
    assert towers.DevicePlan(("/gpu:0",), "CPU").compiled_unit(True) == towers.TOWER  # variables on the host
    assert two_gpus.compiled_unit(None) is None
    assert two_gpus.compiled_unit(True) == towers.TOWER
    assert towers.DevicePlan.single_cpu().compiled_unit(None) is None
    assert towers.DevicePlan.single_cpu().compiled_unit(True) == towers.STEP
    one_host = multiworker.LocalCluster()
    assert TowerStep(None, one_gpu, one_host).compiled_unit == towers.STEP  # decided once, by the plan
    assert TowerStep(None, two_gpus, one_host).compiled_unit is None
    assert TowerStep(None, two_gpus, one_host, jit_compile=True).compiled_unit == towers.TOWER
    assert one_gpu.compiled_unit(None, across_hosts=True) is None  # collectives across hosts


def test_xla_compiled_step_trains_like_the_plain_step(tmp_path):
    runs = {}
    for jit in (False, True):
        config = common.RunConfig(tf_random_seed=5, jit_compile=jit)
        est = common.Estimator(models.classifier_fn, str(tmp_path / str(jit)), params={"hidden": 8}, config=config)
        est.train(one_batch(), steps=3)
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
        est.train(one_batch(), steps=3)
        runs[jit] = model_values(est)
    assert "net/classifier/bn/moving_mean" in runs[True]
    for name, value in runs[True].items():
        np.testing.assert_allclose(value, runs[False][name], rtol=1e-4, atol=1e-6, err_msg=name)


def test_compiled_towers_see_the_global_step(tmp_path):
    schedule = schedules.piecewise_constant([2, 4], [0.1, 0.01, 0.001])
    config = common.RunConfig(jit_compile=True, device_plan=models.plan(2), save_summary_steps=1)
    est = common.Estimator(models.classifier_fn, str(tmp_path), config=config,
                           params={"hidden": 8, "learning_rate_schedule": schedule})
    est.train(one_batch(), steps=6)
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
        est.train(one_batch(), steps=1)
    common.Estimator(model_fn, str(tmp_path / "plain"), config=config.replace(jit_compile=False)).train(
        one_batch(), steps=1)
