"""Reference numbers for TF1 recurrent networks (tf.compat.v1.nn.*) on TF 2.15.

Run with /work/scratch/tf215/venv/bin/python; writes rnn.json next to this file.

Each case is built in its own fresh tf.compat.v1.Graph (graph mode, float32, as a
TF1 program would).  Every trainable variable gets a constant_initializer from
RandomState(seed).uniform(-0.5, 0.5, shape); the seed of the i-th variable (in
tf.compat.v1.trainable_variables() order) of case k is 1000 * (k + 1) + i.
The values recorded in JSON are the float32-rounded values (exact in float64),
so another version can feed exactly the same numbers.
"""
import json
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1
rnn_cell = v1.nn.rnn_cell

BATCH, TIME, DEPTH = 3, 4, 5
X = np.random.RandomState(0).uniform(-0.5, 0.5, (BATCH, TIME, DEPTH)).astype(np.float32)
SEQ_LEN = [4, 2, 3]


def to_json(value):
    """Nested state/outputs (tuples, LSTMStateTuple, arrays) -> JSON."""
    if isinstance(value, rnn_cell.LSTMStateTuple):
        return {"c": to_json(value.c), "h": to_json(value.h)}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return np.asarray(value, dtype=np.float64).tolist()


def flat_outputs(outputs):
    return tf.nest.flatten(outputs)


# Each builder gets x (a [3,4,5] float32 tensor) and returns (outputs, state).
def static_multi_lstm(x):
    cell = rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(6), rnn_cell.LSTMCell(4)])
    return v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)


def dynamic_gru_seqlen(x):
    return v1.nn.dynamic_rnn(rnn_cell.GRUCell(5), x, sequence_length=SEQ_LEN, dtype=tf.float32)


def dynamic_basic_lstm(x):
    return v1.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)


def dynamic_lstm_peephole_proj(x):
    cell = rnn_cell.LSTMCell(6, use_peepholes=True, num_proj=3)
    return v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)


def bidirectional_dynamic_lstm(x):
    return v1.nn.bidirectional_dynamic_rnn(
        rnn_cell.LSTMCell(3), rnn_cell.LSTMCell(3), x, sequence_length=SEQ_LEN, dtype=tf.float32)


def static_bidirectional_gru(x):
    outputs, fw_state, bw_state = v1.nn.static_bidirectional_rnn(
        rnn_cell.GRUCell(3), rnn_cell.GRUCell(3), tf.unstack(x, axis=1), dtype=tf.float32)
    return outputs, (fw_state, bw_state)


def dynamic_basic_rnn(x):
    return v1.nn.dynamic_rnn(rnn_cell.BasicRNNCell(4), x, dtype=tf.float32)


def static_residual_dropout(x):
    cell = rnn_cell.MultiRNNCell([
        rnn_cell.ResidualWrapper(rnn_cell.GRUCell(5)),
        rnn_cell.DropoutWrapper(rnn_cell.LSTMCell(5), output_keep_prob=1.0),
    ])
    return v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)


CASES = [
    ("static_rnn_multi_lstm", static_multi_lstm,
     "static_rnn(MultiRNNCell([LSTMCell(6), LSTMCell(4)]), tf.unstack(x, axis=1), dtype=float32); "
     "outputs: list of TIME [3,4]; state: (LSTMStateTuple(c,h) layer 0, layer 1)"),
    ("dynamic_rnn_gru_seqlen", dynamic_gru_seqlen,
     "dynamic_rnn(GRUCell(5), x, sequence_length=[4,2,3], dtype=float32); outputs [3,4,5]; state [3,5]"),
    ("dynamic_rnn_basic_lstm", dynamic_basic_lstm,
     "dynamic_rnn(BasicLSTMCell(4), x, dtype=float32) (forget_bias=1.0 default); state LSTMStateTuple"),
    ("dynamic_rnn_lstm_peephole_proj", dynamic_lstm_peephole_proj,
     "dynamic_rnn(LSTMCell(6, use_peepholes=True, num_proj=3), x, dtype=float32); outputs [3,4,3]; "
     "state LSTMStateTuple(c [3,6], h [3,3])"),
    ("bidirectional_dynamic_rnn_lstm", bidirectional_dynamic_lstm,
     "bidirectional_dynamic_rnn(LSTMCell(3), LSTMCell(3), x, sequence_length=[4,2,3], dtype=float32); "
     "outputs [fw [3,4,3], bw [3,4,3]]; state [fw LSTMStateTuple, bw LSTMStateTuple]"),
    ("static_bidirectional_rnn_gru", static_bidirectional_gru,
     "static_bidirectional_rnn(GRUCell(3), GRUCell(3), tf.unstack(x, axis=1), dtype=float32); "
     "outputs: list of TIME [3,6] (fw|bw concatenated); state [fw [3,3], bw [3,3]]"),
    ("dynamic_rnn_basic_rnn", dynamic_basic_rnn,
     "dynamic_rnn(BasicRNNCell(4), x, dtype=float32)"),
    ("static_rnn_residual_dropout", static_residual_dropout,
     "static_rnn(MultiRNNCell([ResidualWrapper(GRUCell(5)), DropoutWrapper(LSTMCell(5), "
     "output_keep_prob=1.0)]), tf.unstack(x, axis=1), dtype=float32); state (gru [3,5], LSTMStateTuple)"),
]


def discover(builder):
    """Pass 1: names and shapes of the trainable variables, default initializers."""
    with tf.Graph().as_default():
        builder(v1.placeholder(tf.float32, [BATCH, TIME, DEPTH]))
        return [(v.op.name, v.shape.as_list()) for v in v1.trainable_variables()]


def run_case(index, name, builder, description):
    specs = discover(builder)
    weights = {}
    seeds = {}
    for i, (var_name, shape) in enumerate(specs):
        seed = 1000 * (index + 1) + i
        seeds[var_name] = seed
        weights[var_name] = np.random.RandomState(seed).uniform(-0.5, 0.5, shape).astype(np.float32)

    def custom_getter(getter, *args, **kwargs):
        var_name = kwargs["name"] if "name" in kwargs else args[0]
        if kwargs.get("trainable", True) is not False and var_name in weights:
            kwargs["initializer"] = v1.constant_initializer(weights[var_name])
        return getter(*args, **kwargs)

    with tf.Graph().as_default():
        x = v1.constant(X)
        with v1.variable_scope(v1.get_variable_scope(), custom_getter=custom_getter):
            outputs, state = builder(x)
        variables = v1.trainable_variables()
        names = [v.op.name for v in variables]
        assert names == [n for n, _ in specs], (names, specs)
        loss = tf.add_n([tf.reduce_sum(tf.square(o)) for o in flat_outputs(outputs)])
        grads = v1.gradients(loss, variables)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            got_vars = sess.run(variables)
            for n, value in zip(names, got_vars):
                assert np.array_equal(value, weights[n]), n
            out_v, state_v, loss_v, grads_v = sess.run([outputs, state, loss, grads])
    return {
        "description": description,
        "variable_names": names,
        "variable_shapes": {n: list(s) for n, s in specs},
        "variable_seeds": seeds,
        "weights": {n: to_json(weights[n]) for n in names},
        "outputs": to_json(out_v),
        "state": to_json(state_v),
        "loss_sum_outputs_sq": float(loss_v),
        "gradients": {n: to_json(g) for n, g in zip(names, grads_v)},
    }


def main():
    result = {
        "tensorflow_version": tf.__version__,
        "numpy_version": np.__version__,
        "notes": (
            "Graph mode, float32 variables and inputs; TF_ENABLE_ONEDNN_OPTS=0. "
            "x = RandomState(0).uniform(-0.5,0.5,[3,4,5]) cast to float32 (values stored). "
            "Weights: variable i (trainable_variables order) of case k (0-based) from "
            "RandomState(1000*(k+1)+i).uniform(-0.5,0.5,shape) cast to float32, set via "
            "constant_initializer through a custom getter on the root variable scope "
            "(names unchanged). loss = sum over all output tensors (both directions) of "
            "reduce_sum(square(o)); gradients = tf.compat.v1.gradients(loss, trainable_variables). "
            "LSTMStateTuple is written as {c, h}; tuples as lists. Expect float32 round-off "
            "(compare with rtol ~1e-5 / atol ~1e-6)."),
        "inputs": {"x": to_json(X), "sequence_length": SEQ_LEN,
                   "batch": BATCH, "time": TIME, "depth": DEPTH},
        "cases": {},
    }
    for index, (name, builder, description) in enumerate(CASES):
        result["cases"][name] = run_case(index, name, builder, description)
        print(name, result["cases"][name]["variable_names"])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
