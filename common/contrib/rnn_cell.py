"""TF1's recurrent cells (tf.nn.rnn_cell, tf.compat.v1.nn.rnn_cell, tf.contrib.rnn), as TF1 computed them.

TensorFlow 2.21 still ships TF1's own cells (tensorflow.python.ops.rnn_cell_impl:
layers on variable scopes, from TensorFlow's internal copy of Keras 2), but its
public alias tf.compat.v1.nn.rnn_cell is loaded through keras._tf_keras, which
Keras 3 does not have, so naming a cell there fails. The classes here are
those cells: inside model_fn their variables come from the TF1 variable store
under TF1's names ("rnn/multi_rnn_cell/cell_0/lstm_cell/kernel"), so
checkpoints load both ways and the numbers are TF1's. tf.compat.v1.nn's
static_rnn, dynamic_rnn and the bidirectional ones take them as they are;
contrib's stacked bidirectional networks, which TensorFlow dropped, are here, and its fused ones
(common.contrib.fused_rnn).
"""

import tensorflow as tf

from common.contrib import fused_rnn
from common.internals import tensorflow_internals

_tf1_cells = tensorflow_internals.tf1_cells()

RNNCell = _tf1_cells.RNNCell
LayerRNNCell = _tf1_cells.LayerRNNCell
BasicRNNCell = _tf1_cells.BasicRNNCell
BasicLSTMCell = _tf1_cells.BasicLSTMCell
LSTMCell = _tf1_cells.LSTMCell
GRUCell = _tf1_cells.GRUCell
MultiRNNCell = _tf1_cells.MultiRNNCell
DropoutWrapper = _tf1_cells.DropoutWrapper
ResidualWrapper = _tf1_cells.ResidualWrapper
DeviceWrapper = _tf1_cells.DeviceWrapper
LSTMStateTuple = _tf1_cells.LSTMStateTuple
LSTMBlockFusedCell = fused_rnn.LSTMBlockFusedCell
TimeReversedFusedRNN = fused_rnn.TimeReversedFusedRNN
FusedRNNCellAdaptor = fused_rnn.FusedRNNCellAdaptor


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                                    dtype=None, sequence_length=None, parallel_iterations=None, time_major=False,
                                    scope=None, swap_memory=False):
    """tf.contrib.rnn's stacked bidirectional network: layer i is bidirectional_dynamic_rnn over the previous
    layer's forward and backward outputs, concatenated, in "stack_bidirectional_rnn/cell_<i>"; returns
    (the last layer's outputs, the forward states, the backward states)."""
    return _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, lambda fw, bw, layer,
                  state_fw, state_bw: tf.compat.v1.nn.bidirectional_dynamic_rnn(
                      fw, bw, layer, initial_state_fw=state_fw, initial_state_bw=state_bw,
                      sequence_length=sequence_length, parallel_iterations=parallel_iterations, dtype=dtype,
                      swap_memory=swap_memory, time_major=time_major), lambda outputs: tf.concat(outputs, 2))


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                            dtype=None, sequence_length=None, scope=None):
    """The static counterpart (inputs: a list of [batch, depth] tensors, one a time step)."""
    def layer_rnn(fw, bw, layer, state_fw, state_bw):
        outputs, state_fw, state_bw = tf.compat.v1.nn.static_bidirectional_rnn(
            fw, bw, layer, initial_state_fw=state_fw, initial_state_bw=state_bw, dtype=dtype,
            sequence_length=sequence_length)
        return outputs, (state_fw, state_bw)
    return _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, layer_rnn, list)


def _stack(cells_fw, cells_bw, inputs, initial_states_fw, initial_states_bw, scope, layer_rnn, next_inputs):
    if not cells_fw or not cells_bw or len(cells_fw) != len(cells_bw):
        raise ValueError("stack_bidirectional_rnn: cells_fw and cells_bw must be non-empty lists of one length, got "
                         f"{len(cells_fw or [])} and {len(cells_bw or [])}")
    states_fw, states_bw, layer = [], [], inputs
    with tf.compat.v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with tf.compat.v1.variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = layer_rnn(
                    cell_fw, cell_bw, layer, initial_states_fw[i] if initial_states_fw else None,
                    initial_states_bw[i] if initial_states_bw else None)
                layer = next_inputs(outputs)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def LSTMBlockCell(num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,  # noqa: N802
                  name="lstm_cell"):
    """contrib.rnn's fused LSTM cell, as TF1's LSTMCell of the same gates and names ("lstm_cell/kernel",
    "lstm_cell/bias", the i, j, f, o gate order): the block kernel computed the same cell in one op."""
    return LSTMCell(num_units, use_peepholes=use_peephole, cell_clip=cell_clip, forget_bias=forget_bias,
                    reuse=reuse, name=name, dtype=dtype)
