"""Process-wide settings: what cannot be set once TensorFlow has started is a clear error; verbosity reaches
the project's log lines."""

import logging
import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf
from absl import logging as absl_logging

from common.devices import runtime
from common.devices.plan import DevicePlanError
from tests import ROOT


def test_devices_cannot_be_split_after_tensorflow_started():
    # (conftest split the CPU before any test; the first op starts the runtime, whichever test runs first)
    tf.constant(1.0) + 1.0
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


def _python(code):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)


def test_a_plain_scripts_lines_print_once_through_tensorflows_logger_as_tf_estimators_did():
    """The framework logs through TensorFlow's logger, as tf.estimator did: a plain script (no absl app) that asks
    TensorFlow for INFO gets the loss lines as "INFO:tensorflow:...", and its own TensorFlow lines once."""
    result = _python("""\
        import common
        import tensorflow as tf
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
        tf.compat.v1.logging.info("before")

        def model_fn(features, labels, mode):
            dense = common.get_module("dense", lambda: tf.keras.layers.Dense(1))
            loss = tf.reduce_mean(tf.square(dense(features) - labels))
            return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(
                lambda: tf.keras.optimizers.SGD(0.1)))

        def input_fn():
            return tf.data.Dataset.from_tensors((tf.ones([4, 2]), tf.ones([4, 1]))).repeat()

        common.Estimator(model_fn).train(input_fn, max_steps=2)
        tf.compat.v1.logging.info("after")
        """)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines.count("INFO:tensorflow:before") == 1 and lines.count("INFO:tensorflow:after") == 1
    assert sum(line.startswith("INFO:tensorflow:loss = ") for line in lines) == 1, result.stderr
    assert any(line.startswith("INFO:tensorflow:Loss for final step: ") for line in lines), result.stderr
    assert not any(":absl:" in line for line in lines)


def test_a_job_prints_tensorflows_lines_once_in_absls_format():
    result = _python("""\
        import tensorflow as tf
        from absl import app
        from common.devices import runtime

        def main(argv):
            runtime.log_tensorflow_lines_once()
            tf.compat.v1.logging.info("a framework line")
        app.run(main)
        """)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "a framework line" in line]
    assert len(lines) == 1 and lines[0].startswith("I") and lines[0].endswith("] a framework line"), lines


def test_a_session_configs_threads_apply_before_tensorflow_starts_and_are_named_after():
    result = _python("""\
        import common
        import tensorflow as tf
        config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=3, inter_op_parallelism_threads=2)
        common.RunConfig(session_config=config)
        print(tf.config.threading.get_intra_op_parallelism_threads(),
              tf.config.threading.get_inter_op_parallelism_threads())
        tf.constant(1.0) + 1.0  # the runtime starts
        common.RunConfig(session_config=tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1))
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "2"]
    assert "intra_op_parallelism_threads=1 not applied, TensorFlow's runtime has started" in result.stderr
