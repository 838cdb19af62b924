"""Test session set-up: 4 logical CPU devices, so towers run on real devices.

This must run before TensorFlow starts its runtime, hence at import time
of the conftest, before any test module touches a tensor.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from common.jobs import process as job_process  # noqa: E402

job_process.prepare_tensorflow([])  # as the mains do: TensorFlow loads with the project's kernel settings

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import logging  # noqa: E402

NUM_LOGICAL_CPUS = 4
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration()] * NUM_LOGICAL_CPUS)
logging.set_verbosity(logging.INFO)
tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)  # (the framework logs through TensorFlow's logger)


@pytest.fixture
def processes():
    """A list to append the Popen of each task a test starts; those still running afterwards are killed."""
    started = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture
def small_disk(tmp_path):
    """A 1.5 MiB tmpfs, where the machine lets this process mount one."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1536k", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=True)  # (-l: a file still open)
