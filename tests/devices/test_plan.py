"""The device plan: checks naming the flag and the numbers, and what XLA compiles where."""

import pytest
import tensorflow as tf

from common.devices import hosts
from common.devices import plan as towers
from common.engine.step import TowerStep


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
    assert towers.DevicePlan(("/gpu:0",), "CPU").compiled_unit(None) == towers.TOWER  # variables on the host
    assert two_gpus.compiled_unit(None) == towers.TOWER  # by default on GPUs (H100: 2,792 -> 9,939 ex/s)
    assert two_gpus.compiled_unit(False) is None
    assert two_gpus.compiled_unit(True) == towers.TOWER
    assert towers.DevicePlan.single_cpu().compiled_unit(None) is None
    assert towers.DevicePlan.single_cpu().compiled_unit(True) == towers.STEP
    one_host = hosts.LocalCluster()
    assert TowerStep(None, one_gpu, one_host).compiled_unit == towers.STEP  # decided once, by the plan
    assert TowerStep(None, two_gpus, one_host).compiled_unit == towers.TOWER
    assert TowerStep(None, two_gpus, one_host, jit_compile=False).compiled_unit is None
    assert TowerStep(None, two_gpus, one_host, jit_compile=True).compiled_unit == towers.TOWER
    assert one_gpu.compiled_unit(None, across_hosts=True) is None  # collectives across hosts
    assert two_gpus.compiled_unit(None, across_hosts=True) is None


def test_auto_clustering_over_several_gpu_towers_is_refused_by_what_turned_it_on(monkeypatch):
    two_gpus = towers.DevicePlan(("/gpu:0", "/gpu:1"), "GPU")
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit")
    with pytest.raises(towers.DevicePlanError, match=r"TF_XLA_FLAGS=--tf_xla_auto_jit=2 turns on .* --jit_compile"):
        two_gpus.compiled_unit(None)
    # One GPU tower and CPU towers train under it as without it (measured), so they are let through.
    assert towers.DevicePlan(("/gpu:0",), "GPU").compiled_unit(None) == towers.STEP
    assert towers.DevicePlan(("/cpu:0", "/cpu:1"), "CPU").compiled_unit(None) is None
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")
    assert two_gpus.compiled_unit(True) == towers.TOWER
    monkeypatch.delenv("TF_XLA_FLAGS")
    tf.config.optimizer.set_jit(True)
    try:
        with pytest.raises(towers.DevicePlanError, match=r"tf.config.optimizer.set_jit\(True\) turns on"):
            two_gpus.compiled_unit(True)
    finally:
        tf.config.optimizer.set_jit(False)
