"""tf.distribute strategies in RunConfig become towers, on real logical devices."""

import re

import numpy as np
import pytest
import tensorflow as tf

import common
from common.devices import plan as towers
from common.devices import strategies
from tests import models

FEATURES, LABELS = models.blobs(128)


@pytest.mark.parametrize("make,devices,variables", [
    (lambda: tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), ("/cpu:0", "/cpu:1"), ("/cpu:0", "/cpu:1")),
    (lambda: tf.distribute.OneDeviceStrategy("/cpu:2"), ("/cpu:2",), ("/cpu:2",)),
    (lambda: tf.distribute.experimental.CentralStorageStrategy(["/cpu:1", "/cpu:2"]), ("/cpu:1", "/cpu:2"),
     ("/cpu:0",)),
    (lambda: tf.distribute.MultiWorkerMirroredStrategy(), ("/cpu:0",), ("/cpu:0",)),  # no TF_CONFIG: one host
    (tf.distribute.get_strategy, ("/cpu:0",), ("/cpu:0",)),
    # (contrib's, here with no GPU: on logical CPU devices, as TF1's soft placement ran them on the CPU)
    (lambda: strategies.MirroredStrategy(num_gpus=2), ("/cpu:0", "/cpu:1"), ("/cpu:0", "/cpu:1")),
    (lambda: strategies.CollectiveAllReduceStrategy(num_gpus_per_worker=0), ("/cpu:0",), ("/cpu:0",)),
    (lambda: strategies.CollectiveAllReduceStrategy(num_gpus_per_worker=3), ("/cpu:0", "/cpu:1", "/cpu:2"),
     ("/cpu:0", "/cpu:1", "/cpu:2")),
    (lambda: strategies.MirroredStrategy(["/cpu:1", "/cpu:3"], cross_tower_ops=strategies.AllReduceCrossDeviceOps(
        "hierarchical_copy", num_packs=2)), ("/cpu:1", "/cpu:3"), ("/cpu:1", "/cpu:3")),
])
def test_each_strategy_becomes_the_towers_it_stands_for(make, devices, variables):
    config = common.RunConfig(train_distribute=make())
    assert config.device_plan.tower_devices == devices
    assert config.device_plan.variable_devices == variables
    assert config.cluster.num_workers == 1


@pytest.mark.parametrize("given", [
    lambda: {"train_distribute": tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
             "eval_distribute": tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])},
    lambda: {"experimental_distribute": strategies.DistributeConfig(  # (TF 1.x contrib's, GPUs named: none here)
        train_distribute=strategies.MirroredStrategy(num_gpus_per_worker=2),
        eval_distribute=strategies.MirroredStrategy(num_gpus_per_worker=2))},
])
def test_mirrored_strategy_trains_exactly_as_the_same_towers_given_by_flags(tmp_path, given):
    """As under tf.estimator, a strategy's input_fn batch is per replica: two
    towers on batches of 16 each are the flags' two towers splitting 32."""
    by_strategy = common.Estimator(models.classifier_fn, str(tmp_path / "strategy"), params={"hidden": 8},
                                   config=common.RunConfig(tf_random_seed=7, **given()))
    by_plan = common.Estimator(models.classifier_fn, str(tmp_path / "plan"), params={"hidden": 8},
                               config=common.RunConfig(tf_random_seed=7, device_plan=models.plan(2, towers.GPU)))
    by_strategy.train(models.train_input(FEATURES, LABELS, 16), steps=5)
    by_plan.train(models.train_input(FEATURES, LABELS, 32), steps=5)
    first, second = by_strategy.variable_values(), by_plan.variable_values()
    assert sorted(first) == sorted(second)
    for name in first:
        if not name.startswith("optimizer/"):
            np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    model_devices = {name: device for name, device in by_strategy.variable_devices().items()
                     if name != "global_step" and not name.startswith("optimizer/")}
    assert set(model_devices.values()) == {
        "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1"}
    uneven = by_strategy.evaluate(models.eval_input(FEATURES[:100], LABELS[:100], 16))  # 7 elements: 3 steps + 4
    assert uneven == pytest.approx(by_plan.evaluate(models.eval_input(FEATURES[:100], LABELS[:100], 32)))


def test_an_input_fn_that_takes_an_input_context_is_given_one(tmp_path):
    contexts = []

    def input_fn(mode, input_context=None):
        contexts.append((mode, input_context.num_input_pipelines, input_context.input_pipeline_id,
                         input_context.num_replicas_in_sync))
        return models.train_input(FEATURES, LABELS, 16)()

    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 8},
                           config=common.RunConfig(train_distribute=mirrored))
    est.train(input_fn, steps=1)
    assert contexts == [("train", 1, 0, 2)]


class TPUStrategy:  # stands for tf.distribute.TPUStrategy, which needs a TPU to be made
    pass


class ParameterServerStrategyV2:
    pass


@pytest.mark.parametrize("strategy,message", [
    (TPUStrategy(), r"RunConfig\(train_distribute=TPUStrategy\): TPUs are not supported here"),
    (ParameterServerStrategyV2(), r"ParameterServerStrategyV2\): leave train_distribute out: with ps tasks"),
    (object(), r"RunConfig\(train_distribute=object\): not a strategy this project can map"),
])
def test_strategies_that_cannot_be_mapped_are_refused_by_name(strategy, message):
    with pytest.raises(ValueError, match=message):
        common.RunConfig(train_distribute=strategy)


def test_eval_distribute_must_give_the_training_towers_and_device_plan_excludes_strategies():
    with pytest.raises(ValueError, match=r"eval_distribute runs on \('/cpu:2',\) but train_distribute on"):
        common.RunConfig(train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
                         eval_distribute=tf.distribute.OneDeviceStrategy("/cpu:2"))
    with pytest.raises(ValueError, match="give device_plan or train_distribute"):
        common.RunConfig(device_plan=models.plan(2), train_distribute=tf.distribute.OneDeviceStrategy("/cpu:3"))
    assert strategies.device_plan(tf.distribute.OneDeviceStrategy("/cpu:0")) == towers.DevicePlan(("/cpu:0",))


def test_contribs_all_reduce_is_tf_distributes_of_that_name_and_refuses_others_by_name():
    assert isinstance(strategies.AllReduceCrossDeviceOps(), tf.distribute.NcclAllReduce)
    with pytest.raises(ValueError, match="all_reduce_alg='ring'.*'nccl' or 'hierarchical_copy'"):
        strategies.AllReduceCrossDeviceOps("ring")


def test_a_distribute_config_gives_runconfig_its_strategies_and_what_cannot_run_is_refused_by_numbers(caplog):
    mirrored = tf.distribute.MirroredStrategy(["/cpu:1", "/cpu:2"])
    config = common.RunConfig(experimental_distribute=strategies.DistributeConfig(train_distribute=mirrored))
    assert config.train_distribute is mirrored and config.device_plan.tower_devices == ("/cpu:1", "/cpu:2")
    assert config.replace(save_summary_steps=5).device_plan == config.device_plan
    with pytest.raises(ValueError, match="give experimental_distribute or train_distribute, not both"):
        common.RunConfig(train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"),
                         experimental_distribute=strategies.DistributeConfig(train_distribute=mirrored))
    with pytest.raises(ValueError, match=re.escape("DistributeConfig(remote_cluster={'worker': ['w:1']}): a")):
        strategies.DistributeConfig(remote_cluster={"worker": ["w:1"]})
    with caplog.at_level("WARNING", logger="tensorflow"):
        common.RunConfig(train_distribute=strategies.MirroredStrategy(num_gpus=2))
    assert ("RunConfig(train_distribute=MirroredStrategy) asks for towers on /gpu:0, /gpu:1, and this machine has "
            "0 GPU(s): they run as towers on the logical CPU devices /cpu:0, /cpu:1") in caplog.text
    with pytest.raises(ValueError, match=r"towers on /gpu:0, .*/gpu:7, and this machine has 0 GPU\(s\) and 4 "
                                         r"logical CPU device\(s\) to stand in for them: .*cpu_towers=8"):
        common.RunConfig(train_distribute=strategies.MirroredStrategy(num_gpus=8))


def test_collective_all_reduce_over_workers_must_take_each_workers_gpus(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["localhost:1", "localhost:2"]}, '
                                    '"task": {"type": "worker", "index": 0}}')
    with pytest.raises(ValueError, match=r"CollectiveAllReduceStrategy\(num_gpus_per_worker=2\): this worker has 0 "
                                         r"GPU\(s\), and tf.distribute.MultiWorkerMirroredStrategy takes all of them"):
        strategies.CollectiveAllReduceStrategy(num_gpus_per_worker=2)
