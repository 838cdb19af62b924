"""Test session set-up: 4 logical CPU devices, so towers run on real devices.

This must run before TensorFlow starts its runtime, hence at import time
of the conftest, before any test module touches a tensor.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import tensorflow as tf  # noqa: E402
from absl import logging  # noqa: E402

import common  # noqa: E402,F401  (first, as in the mains: TensorFlow loads with the project's kernel settings)

NUM_LOGICAL_CPUS = 4
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration()] * NUM_LOGICAL_CPUS)
logging.set_verbosity(logging.INFO)
