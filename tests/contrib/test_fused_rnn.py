"""contrib.rnn's fused LSTM (common.contrib.fused_rnn) inside model_fn: contrib's variable names, and outputs, final
states and gradients equal to TensorFlow 2.15's LSTMCell run by dynamic_rnn with the same weights
(tests/data/tf215_tf1/fused_crf/ref.json, made by make_ref.py beside it)."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib import rnn_cell
from common.tf1 import train as tf1_train

V1 = tf.compat.v1
REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "tf215_tf1", "fused_crf",
                                        "ref.json")))
X = np.array(REFERENCE["input_x"], np.float32)  # [time, batch, depth]
SEQ = np.array(REFERENCE["input_seq"], np.int32)
KERNEL = np.array(REFERENCE["input_kernel"], np.float32)
BIAS = np.array(REFERENCE["input_bias"], np.float32)
W = np.arange(90, dtype=np.float32).reshape(6, 3, 5) / 90.0  # the reference's loss weights


def _reference_weights(getter, name, *args, **kwargs):
    kwargs["initializer"] = V1.constant_initializer(KERNEL if name.endswith("kernel") else BIAS)
    return getter(name, *args, **kwargs)


def _model_fn(features, labels, mode):
    x = tf.transpose(features["x"], [1, 0, 2])  # time-major, as the fused cells take it
    with V1.variable_scope(V1.get_variable_scope(), custom_getter=_reference_weights):
        forward, fw_state = rnn_cell.LSTMBlockFusedCell(5)(x, dtype=tf.float32, sequence_length=features["seq"])
        backward, bw_state = rnn_cell.TimeReversedFusedRNN(rnn_cell.LSTMBlockFusedCell(5))(
            x, dtype=tf.float32, sequence_length=features["seq"])
        whole, whole_state = rnn_cell.LSTMBlockFusedCell(5, name="whole")(x, dtype=tf.float32)
    loss = tf.reduce_sum(forward * W) + tf.reduce_sum(fw_state.h) + tf.reduce_sum(backward * W)
    batch_major = {"fw_outputs": forward, "bw_outputs": backward, "full_outputs": whole}
    predictions = {key: tf.transpose(value, [1, 0, 2]) for key, value in batch_major.items()}
    predictions.update(fw_c=fw_state.c, fw_h=fw_state.h, bw_c=bw_state.c, bw_h=bw_state.h, full_c=whole_state.c,
                       full_h=whole_state.h)
    return common.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                train_op=tf1_train.GradientDescentOptimizer(1.0).minimize(loss))


def _input():
    features = {"x": np.transpose(X, [1, 0, 2]), "seq": SEQ}
    return lambda: tf.data.Dataset.from_tensors((features, np.zeros(3, np.float32)))


def test_forward_backward_and_whole_sequence_outputs_states_and_gradients_are_tf215s(tmp_path):
    est = common.Estimator(_model_fn, str(tmp_path))
    predicted = next(est.predict(_input(), yield_single_examples=False))
    for key in ("fw_c", "fw_h", "bw_c", "bw_h", "full_c", "full_h"):
        np.testing.assert_allclose(predicted[key], REFERENCE[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for key in ("fw_outputs", "bw_outputs", "full_outputs"):  # (zero past each length where lengths were given)
        np.testing.assert_allclose(np.transpose(predicted[key], [1, 0, 2]), REFERENCE[key], rtol=1e-5, atol=1e-6)
    est.train(_input(), steps=1)  # one gradient-descent step at rate 1: the weights move by the gradient
    assert sorted(n for n in est.get_variable_names() if n != "global_step") == [
        "lstm_fused_cell/bias", "lstm_fused_cell/kernel", "lstm_fused_cell_1/bias", "lstm_fused_cell_1/kernel",
        "whole/bias", "whole/kernel"]
    np.testing.assert_allclose(KERNEL - est.get_variable_value("lstm_fused_cell/kernel"),
                               REFERENCE["grad_fw_kernel"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(BIAS - est.get_variable_value("lstm_fused_cell/bias"), REFERENCE["grad_fw_bias"],
                               rtol=1e-4, atol=1e-5)


def test_the_input_gradient_and_a_list_of_steps_in_and_out():
    with tf.Graph().as_default():
        x = tf.constant(X)
        with V1.variable_scope("net", custom_getter=_reference_weights):
            forward, fw_state = rnn_cell.LSTMBlockFusedCell(5)(x, dtype=tf.float32, sequence_length=SEQ)
            backward, _ = rnn_cell.TimeReversedFusedRNN(rnn_cell.LSTMBlockFusedCell(5))(
                x, dtype=tf.float32, sequence_length=SEQ)
            steps, _ = rnn_cell.LSTMBlockFusedCell(5, name="listed")(tf.unstack(x), dtype=tf.float32)
            adapted, _ = rnn_cell.FusedRNNCellAdaptor(rnn_cell.LSTMCell(5), use_dynamic_rnn=True)(x, dtype=tf.float32)
        loss = tf.reduce_sum(forward * W) + tf.reduce_sum(fw_state.h) + tf.reduce_sum(backward * W)
        gradient = tf.gradients(loss, x)[0]
        with V1.Session() as session:
            session.run(V1.global_variables_initializer())
            got_gradient, got_steps, got_adapted = session.run([gradient, steps, adapted])
    np.testing.assert_allclose(got_gradient, REFERENCE["grad_x"], rtol=1e-4, atol=1e-5)
    assert isinstance(steps, list) and len(steps) == 6
    np.testing.assert_allclose(np.stack(got_steps), REFERENCE["full_outputs"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_adapted, REFERENCE["full_outputs"], rtol=1e-5, atol=1e-6)  # LSTMCell's numbers


def test_a_fused_cell_needs_a_known_depth_and_a_dtype_or_state():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="lstm_fused_cell: give initial_state or dtype"):
            rnn_cell.LSTMBlockFusedCell(4)(tf.zeros([3, 2, 5]))
        with pytest.raises(ValueError, match=r"inputs' depth \(their last dimension\) must be known"):
            rnn_cell.LSTMBlockFusedCell(4)(V1.placeholder(tf.float32, [3, 2, None]), dtype=tf.float32)
        with pytest.raises(ValueError, match="initial_state must be a .cell state, output. pair, got 3"):
            rnn_cell.LSTMBlockFusedCell(4)(tf.zeros([3, 2, 5]), initial_state=(1, 2, 3))
