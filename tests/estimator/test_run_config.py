"""RunConfig: tf.estimator's settings and defaults, checked when made; replace() as tf.estimator had it."""

import json

import pytest
import tensorflow as tf

import common
from common.devices.plan import DevicePlan


def test_run_config_replace_of_one_checkpoint_period_clears_the_other():
    config = common.RunConfig()
    assert config.save_checkpoints_secs == 600
    replaced = config.replace(save_checkpoints_steps=100)
    assert (replaced.save_checkpoints_steps, replaced.save_checkpoints_secs) == (100, None)
    assert replaced.replace(save_checkpoints_secs=30).save_checkpoints_steps is None


def test_defaults_are_tf_estimators_and_one_cpu_tower():
    config = common.RunConfig()
    assert (config.save_summary_steps, config.keep_checkpoint_max, config.log_step_count_steps) == (100, 5, 100)
    assert config.save_checkpoints_steps is None and config.steps_per_loop is None  # (as many as the hooks allow)
    assert config.device_plan == DevicePlan.single_cpu() and not config.batch_per_replica
    assert config.cluster.num_workers == 1 and config.cluster.is_chief
    neither = common.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (neither.save_checkpoints_steps, neither.save_checkpoints_secs) == (None, None)
    disabled = common.RunConfig(save_checkpoints_secs=0)  # (TF1 accepted 0, "disable" in programs' flags)
    assert (disabled.save_checkpoints_steps, disabled.save_checkpoints_secs) == (None, None)


@pytest.mark.parametrize("settings, message", [
    (dict(save_checkpoints_steps=10, save_checkpoints_secs=60), "give save_checkpoints_steps or save_checkpoints_secs"),
    (dict(save_checkpoints_steps=-1), r"save_checkpoints_steps must be > 0 \(0: no periodic .* got -1"),
    (dict(save_summary_steps=-1), "save_summary_steps must be >= 0 or None, got -1"),
    (dict(steps_per_loop=0), "steps_per_loop must be >= 1 or None, got 0"),
])
def test_bad_settings_are_refused_naming_them(settings, message):
    with pytest.raises(ValueError, match=message):
        common.RunConfig(**settings)


def test_a_strategy_becomes_the_plan_and_a_plan_beside_it_is_refused():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = common.RunConfig(train_distribute=strategy)
    assert config.device_plan.tower_devices == ("/cpu:0", "/cpu:1") and config.batch_per_replica
    with pytest.raises(ValueError, match="give device_plan or train_distribute/eval_distribute, not both"):
        common.RunConfig(train_distribute=strategy, device_plan=DevicePlan(("/cpu:0",)))


@pytest.mark.parametrize("tf_config, want", [  # each as tf.estimator 2.15's RunConfig read it
    (None, ["worker", 0, True, 1, 0, "", 0, {}]),
    ({"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}, "task": {"type": "ps", "index": 0}},
     ["ps", 0, False, 3, 1, "grpc://h:4", 3, {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}]),
    ({"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}, "task": {"type": "worker", "index": 1}},
     ["worker", 1, False, 3, 1, "grpc://h:3", 2, {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}]),
    ({"cluster": {"chief": ["h:1"], "worker": ["h:2"]}, "task": {"type": "evaluator", "index": 0}},
     ["evaluator", 0, False, 0, 0, "", None, {}]),
])
def test_the_cluster_properties_are_tf_estimators(monkeypatch, tf_config, want):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    config = common.RunConfig()
    assert [config.task_type, config.task_id, config.is_chief, config.num_worker_replicas, config.num_ps_replicas,
            config.master, config.global_id_in_cluster, config.cluster_spec.as_dict()] == want
    assert (config.evaluation_master, config.device_fn, config.protocol) == ("", None, None)
