"""The device plan: where towers run, where variables live, what XLA compiles.

The official CIFAR-10 estimator example put one model replica ("tower") on
each device and its variables on the CPU or spread over the GPUs
(--variable_strategy); the plan says which devices those are, checked
against the machine, and where the update is applied (the consolidation
device).
"""

import dataclasses
import os
import re
from typing import Tuple

import tensorflow as tf

CPU = "CPU"
GPU = "GPU"
VARIABLE_STRATEGIES = (CPU, GPU)
HOST_DEVICE = "/cpu:0"
STEP = "step"    # XLA compiles the whole train step
TOWER = "tower"  # XLA compiles each tower's forward and backward pass


class DevicePlanError(ValueError):
    """A tower flag combination that cannot run on this machine."""


@dataclasses.dataclass(frozen=True)
class DevicePlan:
    """Where towers run and where variables live.

    variable_strategy CPU: every model variable on /cpu:0, updates applied
    there. GPU: variables spread over the tower devices, updates applied on
    the first tower device.
    """

    tower_devices: Tuple[str, ...]
    variable_strategy: str = CPU

    def __post_init__(self):
        if not self.tower_devices:
            raise DevicePlanError("a device plan needs at least one tower device")
        if self.variable_strategy not in VARIABLE_STRATEGIES:
            raise DevicePlanError(
                f"--variable_strategy={self.variable_strategy!r} is not one of "
                f"{', '.join(VARIABLE_STRATEGIES)}"
            )

    @classmethod
    def single_cpu(cls):
        return cls(tower_devices=(HOST_DEVICE,), variable_strategy=CPU)

    @property
    def num_towers(self):
        return len(self.tower_devices)

    @property
    def variable_devices(self):
        if self.variable_strategy == CPU:
            return (HOST_DEVICE,)
        return self.tower_devices

    @property
    def consolidation_device(self):
        if self.variable_strategy == CPU:
            return HOST_DEVICE
        return self.tower_devices[0]

    @property
    def uses_gpus(self):
        return "gpu" in self.tower_devices[0].lower()

    @property
    def on_one_device(self):
        """One tower on the device that holds every variable: the step can be one XLA cluster."""
        return self.num_towers == 1 and self.variable_devices == self.tower_devices

    def compiled_unit(self, jit_compile, across_hosts=False):
        """What XLA compiles: the whole train STEP, each TOWER, or nothing (None).

        The one place XLA is decided; the tower step asks it once.

        jit_compile None means auto: on GPUs, the step on one GPU that holds
        every variable (H100, ResNet-44 batch 128: 5380 -> 14208 ex/s), and
        each tower over several (an XLA cluster runs on one device and cannot
        reach a variable on another, so each tower's forward and backward pass
        compiles on its own device, fed the variables' values: two logical
        towers of an H100, 2,792 -> 9,939 ex/s); nothing on CPU, where XLA
        measured slower (43 vs 55 ex/s). Across hosts the step holds
        collectives, so auto leaves XLA off there. Auto towers fall back to
        plain ones for a model they cannot compile (common.engine.step).
        """
        clustering = auto_clustering()
        if clustering and self.uses_gpus and self.num_towers > 1:
            raise DevicePlanError(
                f"{clustering} turns on TensorFlow's XLA auto-clustering, which trains several GPU towers to NaN "
                "(ResNet-44 on 2 logical GPUs of one card: NaN at step 3, either variable strategy); turn it off "
                "and pass --jit_compile (RunConfig(jit_compile=True)), which compiles each tower"
            )
        if jit_compile is None:
            jit_compile = self.uses_gpus and not across_hosts
        if not jit_compile:
            return None
        return STEP if self.on_one_device else TOWER


def auto_clustering():
    """How TensorFlow's own XLA auto-clustering was turned on (TF_XLA_FLAGS or tf.config.optimizer.set_jit),
    or None where it is off."""
    flag = re.search(r"--tf_xla_auto_jit=(\S+)", os.environ.get("TF_XLA_FLAGS", ""))
    if flag and flag.group(1) not in ("0", "-1"):
        return f"TF_XLA_FLAGS={flag.group(0)}"
    if tf.config.optimizer.get_jit():
        return "tf.config.optimizer.set_jit(True)"
    return None


def make_device_plan(num_gpus, variable_strategy, cpu_towers=0):
    """Checks the tower flags against the machine and returns the plan.

    Args:
      num_gpus: towers on /gpu:0..num_gpus-1 (logical GPUs count, so a split
        card offers several); 0 means CPU towers.
      variable_strategy: "CPU" or "GPU".
      cpu_towers: with num_gpus=0, run this many towers on logical CPU devices
        /cpu:0..N-1 (they must exist: see common.runtime.configure).
    """
    if variable_strategy not in VARIABLE_STRATEGIES:
        raise DevicePlanError(
            f"--variable_strategy={variable_strategy!r} is not one of "
            f"{', '.join(VARIABLE_STRATEGIES)}"
        )
    if num_gpus < 0:
        raise DevicePlanError(f"--num_gpus={num_gpus} must be >= 0")
    if cpu_towers < 0:
        raise DevicePlanError(f"--cpu_towers={cpu_towers} must be >= 0")
    if num_gpus > 0:
        if cpu_towers > 0:
            raise DevicePlanError(
                f"--cpu_towers={cpu_towers} and --num_gpus={num_gpus} both ask for "
                "towers; set one of them to 0"
            )
        found = tf.config.list_logical_devices("GPU")
        if num_gpus > len(found):
            names = ", ".join(d.name for d in found) or "none"
            raise DevicePlanError(
                f"--num_gpus={num_gpus} but this machine has {len(found)} GPU(s) "
                f"(found: {names}); use --split_gpu={num_gpus} to split one card "
                "into several logical GPUs"
            )
        return DevicePlan(tuple(f"/gpu:{i}" for i in range(num_gpus)), variable_strategy)
    if cpu_towers == 0:
        if variable_strategy == GPU:
            raise DevicePlanError(
                "--variable_strategy=GPU needs GPU towers, but --num_gpus=0; set "
                "--variable_strategy=CPU (or --cpu_towers=N to spread variables "
                "over N logical CPU devices)"
            )
        return DevicePlan.single_cpu()
    found = tf.config.list_logical_devices("CPU")
    if cpu_towers > len(found):
        raise DevicePlanError(
            f"--cpu_towers={cpu_towers} but only {len(found)} logical CPU device(s) "
            "exist; common.runtime.configure(cpu_towers=...) must run before "
            "TensorFlow starts"
        )
    return DevicePlan(tuple(f"/cpu:{i}" for i in range(cpu_towers)), variable_strategy)


def check_batch_size(batch_size, num_towers, flag_name):
    """The official example's rule: every tower gets the same number of examples."""
    if batch_size < 1:
        raise DevicePlanError(f"--{flag_name}={batch_size} must be >= 1")
    if batch_size % num_towers:
        raise DevicePlanError(
            f"--{flag_name}={batch_size} must be a multiple of the number of "
            f"towers ({num_towers})"
        )
