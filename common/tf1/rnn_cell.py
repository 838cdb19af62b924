"""TF1's recurrent cells (tf.nn.rnn_cell, tf.compat.v1.nn.rnn_cell, tf.contrib.rnn), as TF1 computed them.

TensorFlow 2.21 still ships TF1's own cells (tensorflow.python.ops.rnn_cell_impl:
layers on variable scopes, from TensorFlow's internal copy of Keras 2), but its
public alias tf.compat.v1.nn.rnn_cell is loaded through keras._tf_keras, which
Keras 3 does not have, so naming a cell there fails. The classes here are
those cells: inside model_fn their variables come from the TF1 variable store
under TF1's names ("rnn/multi_rnn_cell/cell_0/lstm_cell/kernel"), so
checkpoints load both ways and the numbers are TF1's. tf.compat.v1.nn's
static_rnn, dynamic_rnn and the bidirectional ones take them as they are.
"""

from tensorflow.python.ops import rnn_cell_impl as _tf1_cells

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
