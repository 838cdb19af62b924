"""tf.estimator.tpu's RunConfig: the project's, with the TPU settings kept and TPU hardware refused by name."""

import pytest

from common.tpu import run_config


def test_a_tpu_run_config_is_the_projects_with_its_tpu_config():
    config = run_config.RunConfig(model_dir="/tmp/m", save_checkpoints_steps=7, master=None, cluster=None,
                                  tpu_config=run_config.TPUConfig(iterations_per_loop=50, num_shards=8,
                                                                  per_host_input_for_training=3))
    assert config.model_dir == "/tmp/m" and config.save_checkpoints_steps == 7
    assert config.tpu_config.iterations_per_loop == 50 and config.steps_per_loop is None  # (not taken from it)
    assert config.replace(model_dir="/tmp/n").tpu_config == config.tpu_config
    assert run_config.InputPipelineConfig.PER_HOST_V2 == 3


def test_tpu_hardware_is_refused_by_argument_and_a_resolver_passed_anyway_is_set_aside(caplog):
    """TPU programs (tensorflow/tpu's MobileNet) pass their cluster resolver whatever --use_tpu says."""
    resolver = run_config.TPUClusterResolver("", zone=None, project=None)  # (TF1's took an empty name)
    with caplog.at_level("WARNING", logger="tensorflow"):
        assert run_config.RunConfig(cluster=resolver, save_checkpoints_steps=5).save_checkpoints_steps == 5
    assert "tpu.RunConfig(cluster=TPUClusterResolver('')): a TPU cluster resolver is not used here" in caplog.text
    with pytest.raises(ValueError, match="TPUClusterResolver\\(''\\): no TPU can be reached here"):
        resolver.get_master()
    with pytest.raises(ValueError, match="tpu.RunConfig\\(master='grpc://10.0.0.2:8470'\\)"):
        run_config.RunConfig(master="grpc://10.0.0.2:8470")
