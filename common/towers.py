"""Tower data parallelism: the device plan, batch sharding, gradient averaging.

This is the TF2 form of what the official CIFAR-10 estimator example did by
hand: one model replica ("tower") per device, each on its shard of the
global batch, gradients averaged per variable on the device that holds the
variable, the update applied on a consolidation device.
"""

import dataclasses
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

        jit_compile None means auto: the step on one GPU that holds every
        variable (H100, ResNet-44 batch 128: 5380 -> 14208 ex/s), nothing on
        CPU, where XLA measured slower (43 vs 55 ex/s). An XLA cluster runs on
        one device and cannot reach a variable on another, so over several
        devices jit_compile=True compiles each tower's forward and backward
        pass on its own device, fed the variables' values read outside it;
        auto leaves that off until it has been measured on GPUs. Across
        hosts the step holds collectives, so auto leaves XLA off there too.
        """
        if jit_compile is None:
            jit_compile = self.uses_gpus and self.on_one_device and not across_hosts
        if not jit_compile:
            return None
        return STEP if self.on_one_device else TOWER


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


def _batch_size(leaves):
    sizes = {leaf.shape[0] for leaf in leaves if leaf.shape.rank and leaf.shape[0] is not None}
    if len(sizes) > 1:
        raise ValueError(f"the batch's tensors disagree on the batch size: {sorted(sizes)}")
    return sizes.pop() if sizes else tf.shape(leaves[0])[0]


def split_batch(batch, num_shards, allow_uneven=False, device=HOST_DEVICE):
    """Splits every tensor of a nested batch along axis 0 into `num_shards`.

    Returns a list of `num_shards` structures like `batch`, in input order.
    With allow_uneven (eval and predict, whose last batch may be short) the
    first `n % num_shards` shards get one example more; otherwise a batch
    that `num_shards` does not divide is an error.
    """
    if num_shards == 1:
        return [batch]
    with tf.device(device):
        leaves = [tf.convert_to_tensor(leaf) for leaf in tf.nest.flatten(batch)]
        size = _batch_size(leaves)
        if isinstance(size, int):
            if size % num_shards and not allow_uneven:
                raise ValueError(
                    f"a batch of {size} examples cannot be split evenly over "
                    f"{num_shards} towers; make the batch size a multiple of {num_shards}"
                )
            base, extra = divmod(size, num_shards)
            sizes = [base + 1] * extra + [base] * (num_shards - extra)
        elif allow_uneven:
            base, extra = size // num_shards, size % num_shards
            sizes = base + tf.cast(tf.range(num_shards) < extra, size.dtype)
        else:
            tf.debugging.assert_equal(
                size % num_shards,
                0,
                message=f"the batch size must be a multiple of the number of towers ({num_shards})",
            )
            sizes = [size // num_shards] * num_shards
        pieces = [tf.split(leaf, sizes, axis=0, num=num_shards) for leaf in leaves]
    return [tf.nest.pack_sequence_as(batch, [p[i] for p in pieces]) for i in range(num_shards)]


def _device_of(variable):
    return getattr(variable, "device", None) or HOST_DEVICE


def _mean_on_device(grads, scale):
    if any(isinstance(g, tf.IndexedSlices) for g in grads):
        slices = [g if isinstance(g, tf.IndexedSlices) else tf.IndexedSlices(
            g, tf.range(tf.shape(g)[0]), tf.shape(g, out_type=tf.int64)) for g in grads]
        return tf.IndexedSlices(
            tf.concat([s.values for s in slices], 0) * scale,
            tf.concat([tf.cast(s.indices, tf.int64) for s in slices], 0),
            slices[0].dense_shape,
        )
    return tf.math.add_n(grads) * scale


def average_gradients(tower_grads, variables):
    """Averages each variable's tower gradients on the variable's own device.

    Args:
      tower_grads: one list per tower, aligned with `variables` (None where a
        variable got no gradient).
      variables: the tf.Variables the gradients belong to.
    Returns:
      A list aligned with `variables`: the mean gradient, or None.
    """
    averaged = []
    for index, variable in enumerate(variables):
        grads = [grads[index] for grads in tower_grads if grads[index] is not None]
        if not grads:
            averaged.append(None)
            continue
        with tf.device(_device_of(variable)):
            averaged.append(_mean_on_device(grads, 1.0 / len(tower_grads)))
    return averaged
