"""Process-wide TensorFlow settings that must be made before the runtime starts.

Logical devices (several CPU towers on one CPU, several GPU towers on one
card), thread pools and device-placement logging can only be set before
TensorFlow creates its first device, so the mains call `configure` first.
"""

import logging
import shutil
import subprocess

import tensorflow as tf
from absl import logging as absl_logging

from common.devices.plan import DevicePlanError

_GPU_MEMORY_SHARE = 0.9  # leave some room for the CUDA context and cuDNN workspaces


def _total_gpu_memory_mb():
    """Memory of GPU 0 in MiB from nvidia-smi, or None when it cannot be asked."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True, text=True, timeout=30, check=True).stdout
        return int(out.strip().splitlines()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def configure(cpu_towers=0, split_gpu=0, split_gpu_memory_mb=0, num_intra_threads=0,
              num_inter_threads=0, log_device_placement=False):
    """Applies the settings; DevicePlanError when a request cannot be met.

    cpu_towers > 1 splits the CPU into that many logical devices.
    split_gpu > 1 splits GPU 0 into that many logical GPUs of
    split_gpu_memory_mb each (default: 90% of the card shared equally).
    """
    try:
        if num_intra_threads:
            tf.config.threading.set_intra_op_parallelism_threads(num_intra_threads)
        if num_inter_threads:
            tf.config.threading.set_inter_op_parallelism_threads(num_inter_threads)
        if cpu_towers > 1:
            cpu = tf.config.list_physical_devices("CPU")[0]
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * cpu_towers)
        if split_gpu > 1:
            gpus = tf.config.list_physical_devices("GPU")
            if not gpus:
                raise DevicePlanError(f"--split_gpu={split_gpu} needs a GPU, and TensorFlow found none")
            memory = split_gpu_memory_mb
            if not memory:
                total = _total_gpu_memory_mb()
                if total is None:
                    raise DevicePlanError(
                        f"--split_gpu={split_gpu}: cannot read the card's memory; "
                        "give --split_gpu_memory_mb")
                memory = int(total * _GPU_MEMORY_SHARE / split_gpu)
            tf.config.set_logical_device_configuration(
                gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=memory)] * split_gpu)
    except RuntimeError as error:
        raise DevicePlanError(
            f"TensorFlow's devices are already initialized, so towers and threads can no "
            f"longer be configured ({error})") from error
    tf.debugging.set_log_device_placement(log_device_placement)


def set_verbosity(v):
    """tf.compat.v1.logging.set_verbosity, which the upgrade maps TF1's to: TensorFlow's logger (the
    framework's lines: loss, steps/sec, checkpoints) and absl's (a program's own absl lines) at one level.

    Args:
      v: a Python logging level (tf.compat.v1.logging.INFO is one) or its name ("INFO", as TF1's logger took).
    Raises:
      ValueError: v is a name that is no logging level.
    """
    level = v
    if isinstance(level, str):
        named = logging.getLevelName(level.upper())
        if not isinstance(named, int):
            raise ValueError(f"set_verbosity({level!r}): not a logging level (DEBUG, INFO, WARN, ERROR, FATAL)")
        level = named
    tf.compat.v1.logging.set_verbosity(level)
    absl_logging.set_verbosity(absl_logging.converter.standard_to_absl(level))


def log_tensorflow_lines_once():
    """In an absl program (the project's jobs call this as they start; `import common` never does), TensorFlow's
    log lines, the framework's among them, print once, in absl's format: TensorFlow gave its logger a handler of
    its own when it loaded before absl's handler joined the root logger, and each line then printed twice."""
    logger = tf.get_logger()
    for handler in list(logger.handlers):
        logger.removeHandler(handler)


def apply_session_config(session_config):
    """What a TF1 ConfigProto (RunConfig(session_config=...)) asks that TF 2 can still set: thread counts
    (while TensorFlow's runtime has not started), device-placement logging and soft placement; returns the
    settings it could not apply, for the caller to name."""
    not_applied = []
    for field, setter in (("intra_op_parallelism_threads", tf.config.threading.set_intra_op_parallelism_threads),
                          ("inter_op_parallelism_threads", tf.config.threading.set_inter_op_parallelism_threads)):
        value = getattr(session_config, field, 0)
        if value:
            try:
                setter(value)
            except RuntimeError:  # the runtime has started: threads are fixed
                not_applied.append(f"{field}={value}")
    if getattr(session_config, "log_device_placement", False):
        tf.debugging.set_log_device_placement(True)
    if getattr(session_config, "allow_soft_placement", False):
        tf.config.set_soft_device_placement(True)
    return not_applied
