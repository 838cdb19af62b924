"""Process-wide settings: what cannot be set once TensorFlow has started is a clear error; verbosity reaches
the project's log lines."""

import logging

import pytest
import tensorflow as tf
from absl import logging as absl_logging

from common.devices import runtime
from common.devices.plan import DevicePlanError


def test_devices_cannot_be_split_after_tensorflow_started():
    # (conftest split the CPU before any test; TensorFlow's devices exist now)
    with pytest.raises(DevicePlanError, match="already initialized, so towers and threads can no longer be"):
        runtime.configure(cpu_towers=2)


def test_splitting_a_gpu_that_is_not_there_says_so():
    with pytest.raises(DevicePlanError, match="--split_gpu=2 needs a GPU, and TensorFlow found none"):
        runtime.configure(split_gpu=2)


def test_set_verbosity_sets_tensorflows_and_the_projects_log_level():
    before = absl_logging.get_verbosity()
    try:
        runtime.set_verbosity(logging.INFO)
        assert absl_logging.level_info()
        runtime.set_verbosity(logging.ERROR)
        assert not absl_logging.level_info() and absl_logging.get_verbosity() == absl_logging.ERROR
    finally:
        absl_logging.set_verbosity(before)


def test_set_verbosity_takes_a_levels_name_as_tf1s_logger_did():
    runtime.set_verbosity("INFO")
    assert tf.compat.v1.logging.get_verbosity() == logging.INFO and absl_logging.get_verbosity() == absl_logging.INFO
    with pytest.raises(ValueError, match="set_verbosity\\('LOUD'\\): not a logging level"):
        runtime.set_verbosity("LOUD")
    runtime.set_verbosity(logging.WARNING)
