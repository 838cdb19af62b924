"""TF1's recurrent networks (common.contrib.rnn_cell with tf.compat.v1.nn's static/dynamic/bidirectional rnn) inside
model_fn: TF1's variable names, and outputs, states and gradients equal to TensorFlow 2.15's for the same weights
(tests/data/tf215_tf1/rnn.json, made by make_rnn.py beside it), on one tower and on two."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib import rnn_cell
from common.tf1 import train as tf1_train
from tests import models

V1 = tf.compat.v1
REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "tf215_tf1", "rnn.json")))
X = np.array(REFERENCE["inputs"]["x"], np.float32)
SEQ_LEN = REFERENCE["inputs"]["sequence_length"]


def _static_bidirectional(x):
    outputs, fw_state, bw_state = V1.nn.static_bidirectional_rnn(rnn_cell.GRUCell(3), rnn_cell.GRUCell(3),
                                                                 tf.unstack(x, axis=1), dtype=tf.float32)
    return outputs, (fw_state, bw_state)


BUILDERS = {
    "static_rnn_multi_lstm": lambda x, lengths: V1.nn.static_rnn(
        rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(6), rnn_cell.LSTMCell(4)]), tf.unstack(x, axis=1), dtype=tf.float32),
    "dynamic_rnn_gru_seqlen": lambda x, lengths: V1.nn.dynamic_rnn(rnn_cell.GRUCell(5), x, sequence_length=lengths,
                                                                   dtype=tf.float32),
    "dynamic_rnn_basic_lstm": lambda x, lengths: V1.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32),
    "dynamic_rnn_lstm_peephole_proj": lambda x, lengths: V1.nn.dynamic_rnn(
        rnn_cell.LSTMCell(6, use_peepholes=True, num_proj=3), x, dtype=tf.float32),
    "bidirectional_dynamic_rnn_lstm": lambda x, lengths: V1.nn.bidirectional_dynamic_rnn(
        rnn_cell.LSTMCell(3), rnn_cell.LSTMCell(3), x, sequence_length=lengths, dtype=tf.float32),
    "static_bidirectional_rnn_gru": lambda x, lengths: _static_bidirectional(x),
    "dynamic_rnn_basic_rnn": lambda x, lengths: V1.nn.dynamic_rnn(rnn_cell.BasicRNNCell(4), x, dtype=tf.float32),
    "static_rnn_residual_dropout": lambda x, lengths: V1.nn.static_rnn(
        rnn_cell.MultiRNNCell([rnn_cell.ResidualWrapper(rnn_cell.GRUCell(5)),
                               rnn_cell.DropoutWrapper(rnn_cell.LSTMCell(5), output_keep_prob=1.0)]),
        tf.unstack(x, axis=1), dtype=tf.float32),
}


def _flat(value, shapes):
    """The reference's nesting ({c, h} for an LSTM state, lists) flattened in TF's order (c before h), a node
    being a leaf where it has the shape of the next tensor the project gave (`shapes`, consumed in order)."""
    if isinstance(value, dict):
        return _flat(value["c"], shapes) + _flat(value["h"], shapes)
    if shapes and _shape(value) == shapes[0]:
        shapes.pop(0)
        return [np.array(value, np.float32)]
    return [leaf for item in value for leaf in _flat(item, shapes)]


def _shape(value):
    try:
        return np.shape(value)
    except ValueError:  # ragged: a structure, not an array
        return None


def _want(case, predicted):
    reference = REFERENCE["cases"][case]
    shapes = [predicted[f"t{i}"].shape for i in range(len(predicted))]
    want = _flat([reference["outputs"], reference["state"]], shapes)
    assert not shapes and len(want) == len(predicted)
    return want


def _model_fn(case):
    weights = {name: np.array(value, np.float32) for name, value in REFERENCE["cases"][case]["weights"].items()}

    def fixed_weights(getter, name, *args, **kwargs):
        if name in weights:
            kwargs["initializer"] = V1.constant_initializer(weights[name])
        return getter(name, *args, **kwargs)

    def model_fn(features, labels, mode):
        with V1.variable_scope(V1.get_variable_scope(), custom_getter=fixed_weights):
            outputs, state = BUILDERS[case](features["x"], features["length"])
        flat = tf.nest.flatten(outputs) + tf.nest.flatten(state)
        loss = tf.add_n([tf.reduce_sum(tf.square(o)) for o in tf.nest.flatten(outputs)])
        return common.EstimatorSpec(mode, predictions={f"t{i}": t for i, t in enumerate(flat)}, loss=loss,
                                    train_op=tf1_train.GradientDescentOptimizer(1.0).minimize(loss))
    return model_fn


def _input(copies=1):
    features = {"x": np.concatenate([X] * copies), "length": np.array(SEQ_LEN * copies, np.int32)}
    return lambda: tf.data.Dataset.from_tensors((features, np.zeros(len(X) * copies, np.float32)))


@pytest.mark.parametrize("case", sorted(BUILDERS))
def test_each_network_gives_tf215s_names_outputs_states_and_gradients(case, tmp_path):
    reference = REFERENCE["cases"][case]
    est = common.Estimator(_model_fn(case), str(tmp_path))
    predicted = next(est.predict(_input(), yield_single_examples=False))
    for i, value in enumerate(_want(case, predicted)):
        np.testing.assert_allclose(predicted[f"t{i}"], value, rtol=1e-5, atol=1e-6)
    est.train(_input(), steps=1)  # one gradient-descent step at rate 1: the weights move by the gradient
    assert sorted(n for n in est.get_variable_names() if n != "global_step") == sorted(reference["variable_names"])
    for name in reference["variable_names"]:
        moved = np.array(reference["weights"][name], np.float32) - est.get_variable_value(name)
        np.testing.assert_allclose(moved, reference["gradients"][name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_a_stacked_lstm_gives_the_same_numbers_on_two_towers(tmp_path):
    case = "static_rnn_multi_lstm"
    est = common.Estimator(_model_fn(case), str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    predicted = next(est.predict(_input(copies=2), yield_single_examples=False))
    halves = {key: value[:len(X)] for key, value in predicted.items()}
    for i, value in enumerate(_want(case, halves)):
        np.testing.assert_allclose(predicted[f"t{i}"], np.concatenate([value, value]), rtol=1e-5, atol=1e-6)


def test_contribs_stacked_bidirectional_network_is_its_layers_of_bidirectional_rnns_under_contribs_names():
    def ones(getter, name, *args, **kwargs):
        kwargs["initializer"] = V1.constant_initializer(0.1)
        return getter(name, *args, **kwargs)

    with tf.Graph().as_default():
        x = tf.constant(X)
        with V1.variable_scope(V1.get_variable_scope(), custom_getter=ones):
            stacked, states_fw, _ = rnn_cell.stack_bidirectional_dynamic_rnn(
                [rnn_cell.GRUCell(3), rnn_cell.GRUCell(2)], [rnn_cell.GRUCell(3), rnn_cell.GRUCell(2)], x,
                sequence_length=SEQ_LEN, dtype=tf.float32)
            names = [v.op.name for v in V1.trainable_variables()]
            with V1.variable_scope("by_hand"):
                layer = x
                for i, units in enumerate((3, 2)):
                    with V1.variable_scope(f"cell_{i}"):
                        outputs, _ = V1.nn.bidirectional_dynamic_rnn(rnn_cell.GRUCell(units), rnn_cell.GRUCell(units),
                                                                     layer, sequence_length=SEQ_LEN, dtype=tf.float32)
                    layer = tf.concat(outputs, 2)
        with V1.Session() as session:
            session.run(V1.global_variables_initializer())
            got, want = session.run([stacked, layer])
    assert names[0] == "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel"
    assert len(states_fw) == 2 and got.shape == (3, 4, 4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="cells_fw and cells_bw must be non-empty lists of one length"):
        rnn_cell.stack_bidirectional_dynamic_rnn([rnn_cell.GRUCell(2)], [], X, dtype=tf.float32)


def test_contribs_block_lstm_cell_is_tf1s_lstm_cell_of_its_names():
    with tf.Graph().as_default():
        cell = rnn_cell.LSTMBlockCell(3, use_peephole=True)
        V1.nn.dynamic_rnn(cell, tf.zeros([2, 4, 5]), dtype=tf.float32)
        names = [v.op.name for v in V1.trainable_variables()]
    assert isinstance(cell, rnn_cell.LSTMCell)
    assert names == ["rnn/lstm_cell/kernel", "rnn/lstm_cell/bias", "rnn/lstm_cell/w_f_diag", "rnn/lstm_cell/w_i_diag",
                     "rnn/lstm_cell/w_o_diag"]
