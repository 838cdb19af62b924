"""contrib.rnn's fused recurrent networks (LSTMBlockFusedCell, TimeReversedFusedRNN, FusedRNNCellAdaptor).

tf.contrib went with TensorFlow 2.0, but the kernel contrib's fused LSTM ran,
BlockLSTM, is still in core TensorFlow with its gradient. The classes here run
it as contrib did: a TF1 layer named "lstm_fused_cell" whose variables
("lstm_fused_cell/kernel" [input + units, 4 units], "lstm_fused_cell/bias")
come from the TF1 variable store, time-major inputs, outputs zeroed past each
sequence's length and the final state taken at that length, so checkpoints and
numbers are contrib's (which equal TF1's LSTMCell of the same weights).
"""

import tensorflow as tf

from common.internals import tensorflow_internals

_TF1_LAYER, _INPUT_SPEC = tensorflow_internals.tf1_layer_base()
_tf1_cells = tensorflow_internals.tf1_cells()

NO_CLIP = -1.0  # BlockLSTM's own default clips the cell at 3; contrib passed -1 unless asked


def _dimension(tensor, axis):
    static = tf.compat.dimension_value(tensor.shape[axis])
    return static if static is not None else tf.shape(tensor)[axis]


class LSTMBlockFusedCell(_TF1_LAYER):
    """contrib.rnn.LSTMBlockFusedCell: the whole sequence in one BlockLSTM op (gates i, j, f, o as LSTMCell's)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, reuse=None, dtype=None,
                 name="lstm_fused_cell"):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._cell_clip = NO_CLIP if cell_clip is None else cell_clip
        self._use_peephole = use_peephole
        self.input_spec = _INPUT_SPEC(ndim=3)

    @property
    def num_units(self):
        return self._num_units

    def build(self, input_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(input_shape)[2])
        if input_size is None:
            raise ValueError(f"{self.name}: the inputs' depth (their last dimension) must be known, got "
                             f"{input_shape}")
        self._kernel = self.add_weight("kernel", [input_size + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight("bias", [4 * self._num_units],
                                     initializer=tf.compat.v1.constant_initializer(0.0))
        if self._use_peephole:
            self._peepholes = [self.add_weight(name, [self._num_units]) for name in ("w_i_diag", "w_f_diag",
                                                                                    "w_o_diag")]
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        """contrib's fused cells took a [time, batch, depth] tensor or a list of [batch, depth] tensors, and gave
        their outputs as the inputs came."""
        if not isinstance(inputs, list):
            return super().__call__(inputs, *args, **kwargs)
        outputs, state = super().__call__(tf.stack(inputs), *args, **kwargs)
        return tf.unstack(outputs), state

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        """(outputs [time, batch, units], LSTMStateTuple(c, h) after each sequence's last step)."""
        time_len, batch_size = _dimension(inputs, 0), _dimension(inputs, 1)
        if initial_state is None:
            if dtype is None:
                raise ValueError(f"{self.name}: give initial_state or dtype")
            zeros = tf.zeros(tf.stack([batch_size, self._num_units]), dtype=dtype)
            initial_state = (zeros, zeros)
        elif len(initial_state) != 2:
            raise ValueError(f"{self.name}: initial_state must be a (cell state, output) pair, got "
                             f"{len(initial_state)} tensors")
        dtype = dtype or initial_state[0].dtype
        cells, outputs = self._run(inputs, initial_state, dtype, time_len, sequence_length)
        if sequence_length is None:
            final = _tf1_cells.LSTMStateTuple(cells[-1], outputs[-1])
        else:
            lengths = tf.cast(sequence_length, tf.int32)
            mask = tf.transpose(tf.sequence_mask(lengths, time_len, dtype=dtype))[:, :, None]
            outputs *= mask
            final = _tf1_cells.LSTMStateTuple(*(_state_at(initial, states, lengths, batch_size) for initial, states
                                              in zip(initial_state, (cells, outputs))))
        return outputs, final

    def _run(self, inputs, initial_state, dtype, time_len, sequence_length):
        if self._use_peephole:
            w_i, w_f, w_o = self._peepholes
        else:
            w_i = w_f = w_o = tf.zeros([self._num_units], dtype=dtype)
        longest = time_len if sequence_length is None else tf.reduce_max(sequence_length)
        results = tf.raw_ops.BlockLSTM(
            seq_len_max=tf.cast(longest, tf.int64), x=inputs, cs_prev=initial_state[0], h_prev=initial_state[1],
            w=self._kernel, wci=w_i, wcf=w_f, wco=w_o, b=self._bias, forget_bias=self._forget_bias,
            cell_clip=self._cell_clip, use_peephole=self._use_peephole)
        return results.cs, results.h


def _state_at(initial, states, lengths, batch_size):
    """Each sequence's state after its last step (the initial state where its length is 0)."""
    padded = tf.concat([initial[None], states], 0)
    return tf.gather_nd(padded, tf.stack([lengths, tf.range(batch_size)], axis=1))


def _reversed(tensor, sequence_length):
    if isinstance(tensor, list):
        return list(reversed(tensor))
    if sequence_length is None:
        return tf.reverse(tensor, [0])
    return tf.reverse_sequence(tensor, sequence_length, seq_axis=0, batch_axis=1)


class TimeReversedFusedRNN:
    """contrib.rnn.TimeReversedFusedRNN: a fused cell run over each sequence backwards (within its length), its
    outputs put back in time order; the state is the cell's after the sequence's first step."""

    def __init__(self, cell):
        self._cell = cell

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
        outputs, state = self._cell(_reversed(inputs, sequence_length), initial_state=initial_state, dtype=dtype,
                                    sequence_length=sequence_length, scope=scope)
        return _reversed(outputs, sequence_length), state


class FusedRNNCellAdaptor:
    """contrib.rnn.FusedRNNCellAdaptor: an RNNCell called as a fused cell (time-major), through static_rnn or,
    with use_dynamic_rnn, dynamic_rnn."""

    def __init__(self, cell, use_dynamic_rnn=False):
        self._cell = cell
        self._use_dynamic_rnn = use_dynamic_rnn

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
        is_list = isinstance(inputs, list)
        if self._use_dynamic_rnn:
            outputs, state = tf.compat.v1.nn.dynamic_rnn(
                self._cell, tf.stack(inputs) if is_list else inputs, sequence_length=sequence_length,
                initial_state=initial_state, dtype=dtype, time_major=True, scope=scope)
            return (tf.unstack(outputs) if is_list else outputs), state
        outputs, state = tf.compat.v1.nn.static_rnn(
            self._cell, inputs if is_list else tf.unstack(inputs), initial_state=initial_state, dtype=dtype,
            sequence_length=sequence_length, scope=scope)
        return (outputs if is_list else tf.stack(outputs)), state
