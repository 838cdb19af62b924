"""Few copies between the towers and the variable devices where XLA compiles each tower.

Every step each tower reads every variable and sends back every gradient and new batch-norm statistic: for a
ResNet a few hundred tensors, each crossing devices as a copy of its own, with its own wait (two logical towers of
one H200 trained at a quarter of one tower's rate). Here they cross packed, one flat buffer per dtype and pair of
devices: on each device that holds variables a compiled function reads them into buffers; each compiled tower
unpacks them, and packs its gradients and statistics by the device of their variable (an IndexedSlices gradient,
an embedding's, goes as its values and indices, so that the optimizer applies it sparsely, as Keras does); on that
device one compiled function averages the towers' buffers, assigns the statistics and applies the optimizer to the
variables it holds. So each gradient is still averaged, and each variable updated, on the device that holds the
variable, as the official example did, in one XLA cluster per device. The optimizer's step count and learning
rate, held on the consolidation device, reach the other devices' clusters as values; its count moves once a step.

A Keras optimizer applies per device this way unless it acts on every variable at once: loss scaling (its
finiteness check and scale span all gradients), a global_clipnorm, an EMA of the weights, gradient accumulation,
or a variable it overwrites with its gradient.
Those, and TF1 or deferred updates, take the step's variable-by-variable path (common.engine.step).
"""

import dataclasses
from typing import Dict, List, Tuple

import keras
import numpy as np
import tensorflow as tf

from common.devices import precision
from common.engine import step_checks, towers
from common.internals import keras_internals


@dataclasses.dataclass(frozen=True)
class Packing:
    """Where each of a list of tensors lies in flat buffers, one buffer per dtype (in first-seen order)."""

    shapes: Tuple[Tuple[int, ...], ...]
    dtypes: Tuple[tf.DType, ...]

    @classmethod
    def of(cls, tensors):
        return cls(tuple(tuple(t.shape.as_list()) for t in tensors), tuple(t.dtype for t in tensors))

    def _groups(self) -> List[List[int]]:
        groups: Dict[tf.DType, List[int]] = {}
        for position, dtype in enumerate(self.dtypes):
            groups.setdefault(dtype, []).append(position)
        return list(groups.values())

    def pack(self, tensors) -> Tuple[tf.Tensor, ...]:
        """One flat buffer per dtype of `tensors` (shaped and typed as this packing says)."""
        return tuple(tf.concat([tf.reshape(tensors[p], [-1]) for p in positions], 0) for positions in self._groups())

    def unpack(self, buffers) -> List[tf.Tensor]:
        """The tensors `pack` made `buffers` of, in their order."""
        tensors = [None] * len(self.shapes)
        for buffer, positions in zip(buffers, self._groups()):
            sizes = [int(np.prod(self.shapes[p], dtype=np.int64)) for p in positions]
            for position, piece in zip(positions, tf.split(buffer, sizes)):
                tensors[position] = tf.reshape(piece, self.shapes[position])
        return tensors


@dataclasses.dataclass(frozen=True)
class _GradientLayout:
    """Where one variable device's gradients lie in a tower's output: the dense ones packed, each IndexedSlices
    one as its values and indices (a Keras optimizer applies those sparsely, as the plain towers' average
    keeps them)."""

    positions: Tuple[int, ...]  # trainable positions with a gradient, in order
    dense: Packing              # of the dense gradients among them
    sparse: Tuple[int, ...]     # the indexes in `positions` of the IndexedSlices ones

    @classmethod
    def of(cls, positions, grads):
        sparse = tuple(i for i, g in enumerate(grads) if isinstance(g, tf.IndexedSlices))
        return cls(tuple(positions), Packing.of([g for i, g in enumerate(grads) if i not in sparse]), sparse)

    def pack(self, grads):
        """(the dense buffers, ((values, indices, dense_shape) of each sparse one)) of a tower's gradients (a list
        by trainable position)."""
        chosen = [grads[p] for p in self.positions]
        return (self.dense.pack([g for i, g in enumerate(chosen) if i not in self.sparse]),
                tuple((chosen[i].values, chosen[i].indices, chosen[i].dense_shape) for i in self.sparse))

    def mean(self, device, packed):
        """The towers' mean gradients on `device`, aligned with `positions`, from each tower's pack()."""
        dense = iter(self.dense.unpack([towers.mean_on(device, list(b)) for b in zip(*[p[0] for p in packed])]))
        sparse = {i: towers.mean_on(device, [tf.IndexedSlices(*p[1][k]) for p in packed])
                  for k, i in enumerate(self.sparse)}
        return [sparse[i] if i in sparse else next(dense) for i in range(len(self.positions))]


# Keras optimizer options that act on every variable at once: a global norm, a moving average of the model's
# weights, gradient accumulators reset together.
_WHOLE_MODEL_OPTIONS = ("global_clipnorm", "use_ema", "gradient_accumulation_steps")


def applies_per_device(optimizer, trainable):
    """Whether the Keras `optimizer` can update each device's variables on its own (see the module's doc)."""
    return (isinstance(optimizer, keras.optimizers.Optimizer) and not precision.scales_loss(optimizer)
            and not any(getattr(optimizer, name, None) for name in _WHOLE_MODEL_OPTIONS)
            and not any(getattr(t.api_variable, "overwrite_with_gradient", False) for t in trainable))


class PackedExchange:
    """The packed reads, tower outputs and per-device updates of one TOWER-compiled train step.

    variables: the step's TrainVariables (common.engine.step), whose read_by_towers() the towers read, trainable
    ones first; the optimizer must apply per device (applies_per_device).
    """

    def __init__(self, variables):
        self.variables = variables
        self._read = variables.read_by_towers()
        self.devices: List[str] = []
        self._positions: Dict[str, List[int]] = {}  # device -> positions in self._read of the variables it holds
        for position, keras_variable in enumerate(self._read):
            device = keras_variable.value.device
            if device not in self._positions:
                self.devices.append(device)
                self._positions[device] = []
            self._positions[device].append(position)
        self._packings = {d: Packing.of([self._read[p].value for p in self._positions[d]]) for d in self.devices}
        self._first_state = len(variables.trainable) + len(variables.frozen)
        self._states = {d: [p - self._first_state for p in self._positions[d] if p >= self._first_state
                            and variables.stateful[p - self._first_state].variable.dtype.is_floating]
                        for d in self.devices}  # device -> indexes in variables.stateful of its floating state
        self._state_packings = {d: Packing.of([variables.stateful[i].variable for i in self._states[d]])
                                for d in self.devices}
        optimizer = variables.optimizer
        rate = keras_internals.learning_rate_variable(optimizer)
        self._counters = [optimizer.iterations] + ([] if rate is None else [rate])  # read by every device's update
        self._grads: Dict[str, _GradientLayout] = {}  # device -> where its gradients lie (tower 0's)
        self._readers = {d: tf.function(self._reader(d), jit_compile=True, autograph=False) for d in self.devices}
        self._appliers = {d: tf.function(self._applier(d), jit_compile=True, autograph=False) for d in self.devices}

    # ------------------------------------------------------------ the reads
    def _reader(self, device):
        def read():
            return self._packings[device].pack([self._read[p].value.read_value() for p in self._positions[device]])
        return read

    def read(self):
        """Each variable device's buffers of the variables it holds (read_by_towers' order within each)."""
        packed = []
        for device in self.devices:
            with tf.device(device):
                packed.append(self._readers[device]())
        return packed

    def values(self, packed):
        """In a tower: the value of each of read_by_towers(), from what read() gave."""
        values = [None] * len(self._read)
        for device, buffers in zip(self.devices, packed):
            for position, value in zip(self._positions[device], self._packings[device].unpack(buffers)):
                values[position] = value
        return values

    # ------------------------------------------------------ a tower's output
    def pack_outputs(self, outputs, values):
        """In a tower: its TowerOutputs with the gradients and floating new statistics packed by variable
        device (packed_grads, packed_states); integer state updates stay in state_updates. A statistic the
        tower left alone packs its old value, which the mean then keeps."""
        grads, states = [], []
        for device in self.devices:
            present = [p for p in self._positions[device] if p < len(self.variables.trainable)
                       and outputs.grads[p] is not None]
            layout = _GradientLayout.of(present, [outputs.grads[p] for p in present])
            if self._grads.setdefault(device, layout) != layout:
                raise ValueError("the towers' model_fn calls differentiate different variables; every call must "
                                 "compute the loss from the same variables")
            grads.append(layout.pack(outputs.grads))
            new = [outputs.state_updates.get(i, values[self._first_state + i]) for i in self._states[device]]
            states.append(self._state_packings[device].pack(new))
        integer = {i: v for i, v in outputs.state_updates.items()
                   if not self.variables.stateful[i].variable.dtype.is_floating}
        return outputs._replace(grads=[], state_updates=integer, packed_grads=tuple(grads),
                                packed_states=tuple(states))

    # ------------------------------------------------------------ the update
    def _applier(self, device):
        trainable, stateful, optimizer = self.variables.trainable, self.variables.stateful, self.variables.optimizer

        def apply(grads, states, counters):
            """grads, states: per tower, this device's packed buffers; counters: the values of self._counters.
            Returns whether every averaged gradient is finite."""
            layout = self._grads[device]
            averaged = layout.mean(device, grads)
            finite = step_checks.all_finite(averaged, device)
            state_mean = [towers.mean_on(device, list(buffers)) for buffers in zip(*states)]
            for i, value in zip(self._states[device], self._state_packings[device].unpack(state_mean)):
                stateful[i].variable.assign(value)
            with keras.StatelessScope(state_mapping=list(zip(self._counters, counters))):
                optimizer.apply(averaged, [trainable[p].api_variable for p in layout.positions])
            return tf.constant(True) if finite is None else finite
        return apply

    def apply(self, passes):
        """Averages the towers' packed gradients and statistics on each variable device and applies them there;
        then counts the optimizer's step. Returns whether every averaged gradient was finite."""
        counters = [v.value.read_value() for v in self._counters]
        finite = []
        for index, device in enumerate(self.devices):
            with tf.device(device):
                finite.append(self._appliers[device](
                    [t.packed_grads[index] for t in passes], [t.packed_states[index] for t in passes], counters))
        iterations = self.variables.optimizer.iterations
        with tf.device(iterations.value.device):
            iterations.assign_add(1)
            return tf.reduce_all(finite)
