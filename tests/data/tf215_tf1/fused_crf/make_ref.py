"""Makes ref.json on TensorFlow 2.15 with TensorFlow Addons 0.23 (contrib's CRF moved there):
`python make_ref.py` (CRF, eager), which runs `python make_ref.py --lstm` (TF1's LSTMCell in a graph) itself."""

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def make_inputs():
    rs = np.random.RandomState(0)
    inputs = rs.randn(3, 5, 4).astype(np.float32)  # CRF: [batch, time, num_tags]
    tags = rs.randint(0, 4, size=(3, 5)).astype(np.int32)
    lengths = np.array([5, 3, 1], np.int32)
    transitions = rs.randn(4, 4).astype(np.float32)
    x = rs.randn(6, 3, 4).astype(np.float32)  # LSTM: [time, batch, depth], 5 units
    seq = np.array([6, 4, 2], np.int32)
    kernel = (rs.randn(9, 20) * 0.3).astype(np.float32)
    bias = (rs.randn(20) * 0.1).astype(np.float32)
    return dict(inputs=inputs, tags=tags, lengths=lengths, transitions=transitions, x=x, seq=seq, kernel=kernel,
                bias=bias)


def as_list(value):
    return np.asarray(value).tolist()


def crf_reference(d, lengths, suffix):
    import tensorflow_addons as tfa
    inputs, transitions = tf.Variable(d["inputs"]), tf.Variable(d["transitions"])
    with tf.GradientTape() as tape:
        log_likelihood, _ = tfa.text.crf_log_likelihood(inputs, d["tags"], lengths, transitions)
        total = tf.reduce_sum(log_likelihood)
    grad_inputs, grad_transitions = tape.gradient(total, [inputs, transitions])
    tags, best = tfa.text.crf_decode(d["inputs"], d["transitions"], lengths)
    found = {"log_likelihood": log_likelihood, "grad_inputs": grad_inputs, "grad_transitions": grad_transitions,
             "sequence_score": tfa.text.crf_sequence_score(d["inputs"], d["tags"], lengths, d["transitions"]),
             "log_norm": tfa.text.crf_log_norm(d["inputs"], lengths, d["transitions"]), "decode_tags": tags,
             "best_score": best}
    return {key + suffix: as_list(value) for key, value in found.items()}


def lstm_reference(d):
    tf.compat.v1.disable_eager_execution()
    x = tf.constant(d["x"])

    def run(inputs, lengths, scope):
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(5, forget_bias=1.0)
        outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, time_major=True,
                                                     dtype=tf.float32, scope=scope)
        return outputs, state, cell.trainable_variables

    fw, fw_state, fw_vars = run(x, d["seq"], "fw")
    reversed_x = tf.reverse_sequence(x, d["seq"], seq_axis=0, batch_axis=1)
    bw_reversed, bw_state, bw_vars = run(reversed_x, d["seq"], "bw")
    bw = tf.reverse_sequence(bw_reversed, d["seq"], seq_axis=0, batch_axis=1)
    full, full_state, full_vars = run(x, None, "full")
    w = np.arange(90, dtype=np.float32).reshape(6, 3, 5) / 90.0
    loss = tf.reduce_sum(fw * w) + tf.reduce_sum(fw_state.h) + tf.reduce_sum(bw * w)
    assigns = [v.assign(d["kernel"] if len(v.shape) == 2 else d["bias"]) for v in fw_vars + bw_vars + full_vars]
    grad_x, grad_kernel, grad_bias = tf.gradients(loss, [x] + fw_vars)
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        session.run(assigns)
        found = session.run(dict(
            fw_outputs=fw, fw_c=fw_state.c, fw_h=fw_state.h, bw_outputs=bw, bw_c=bw_state.c, bw_h=bw_state.h,
            full_outputs=full, full_c=full_state.c, full_h=full_state.h, loss=loss, grad_x=grad_x,
            grad_fw_kernel=grad_kernel, grad_fw_bias=grad_bias))
    return {key: as_list(value) for key, value in found.items()}


def main():
    d = make_inputs()
    if sys.argv[1:] == ["--lstm"]:
        json.dump(lstm_reference(d), sys.stdout)
        return
    ref = {"input_" + key: as_list(value) for key, value in d.items()}
    ref.update(crf_reference(d, d["lengths"], ""))
    ref["lengths_zero"] = [0, 2, 5]
    ref.update(crf_reference(d, np.array(ref["lengths_zero"], np.int32), "_zero"))
    import tensorflow_addons as tfa
    viterbi, score = tfa.text.viterbi_decode(d["inputs"][0], d["transitions"])
    ref.update(viterbi=[int(t) for t in viterbi], viterbi_score=float(score))
    lstm = subprocess.run([sys.executable, __file__, "--lstm"], check=True, capture_output=True, text=True)
    ref.update(json.loads(lstm.stdout))
    json.dump(ref, open(os.path.join(HERE, "ref.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
