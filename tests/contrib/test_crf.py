"""contrib.crf's linear-chain CRF (common.contrib.crf): log-likelihoods, their gradients and decodings equal to
TensorFlow 2.15's (TensorFlow Addons 0.23, contrib's CRF moved there; tests/data/tf215_tf1/fused_crf/ref.json),
sequences of length 0 and 1 among them, and a model_fn that trains its "transitions" as contrib made them."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib import crf
from common.tf1 import train as tf1_train

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "tf215_tf1", "fused_crf",
                                        "ref.json")))
INPUTS = np.array(REFERENCE["input_inputs"], np.float32)  # [batch 3, time 5, tags 4]
TAGS = np.array(REFERENCE["input_tags"], np.int32)
TRANSITIONS = np.array(REFERENCE["input_transitions"], np.float32)
LENGTHS = {"": [5, 3, 1], "_zero": [0, 2, 5]}


@pytest.mark.parametrize("suffix", sorted(LENGTHS))
def test_likelihood_its_gradients_and_decoding_are_tf215s(suffix):
    lengths = np.array(LENGTHS[suffix], np.int32)
    inputs, transitions = tf.Variable(INPUTS), tf.Variable(TRANSITIONS)
    with tf.GradientTape() as tape:
        log_likelihood, used = crf.crf_log_likelihood(inputs, TAGS, lengths, transitions)
        total = tf.reduce_sum(log_likelihood)
    grad_inputs, grad_transitions = tape.gradient(total, [inputs, transitions])
    assert used is transitions
    got = {"log_likelihood": log_likelihood, "grad_inputs": grad_inputs, "grad_transitions": grad_transitions,
           "sequence_score": crf.crf_sequence_score(INPUTS, TAGS, lengths, TRANSITIONS),
           "log_norm": crf.crf_log_norm(INPUTS, lengths, TRANSITIONS)}
    for key, value in got.items():
        np.testing.assert_allclose(value, REFERENCE[key + suffix], rtol=1e-5, atol=1e-6, err_msg=key)
    tags, best = crf.crf_decode(INPUTS, TRANSITIONS, lengths)
    assert tags.dtype == tf.int32 and tags.numpy().tolist() == REFERENCE["decode_tags" + suffix]
    np.testing.assert_allclose(best, REFERENCE["best_score" + suffix], rtol=1e-6)


def test_decoding_in_a_graph_of_unknown_shapes_and_of_one_step_sequences():
    decode = tf.function(lambda x, lengths: crf.crf_decode(x, TRANSITIONS, lengths), input_signature=[
        tf.TensorSpec([None, None, 4]), tf.TensorSpec([None], tf.int64)])
    tags, _ = decode(INPUTS, np.array([5, 3, 1], np.int64))
    assert tags.numpy().tolist() == REFERENCE["decode_tags"]
    tags, best = decode(INPUTS[:, :1], np.array([1, 1, 0], np.int64))  # one step: each row's best tag alone
    assert tags.numpy()[:, 0].tolist() == INPUTS[:, 0].argmax(1).tolist()
    np.testing.assert_allclose(best, INPUTS[:, 0].max(1))
    np.testing.assert_allclose(crf.crf_log_norm(INPUTS[:, :1], np.array([1, 1, 0]), TRANSITIONS),
                               np.append(np.log(np.exp(INPUTS[:2, 0]).sum(1)), 0.0), rtol=1e-6)


def test_numpy_viterbi_decoding_is_contribs():
    tags, score = crf.viterbi_decode(INPUTS[0], TRANSITIONS)
    assert [int(t) for t in tags] == REFERENCE["viterbi"]
    assert score == pytest.approx(REFERENCE["viterbi_score"], rel=1e-6)


def _model_fn(features, labels, mode):
    def reference_transitions(getter, name, *args, **kwargs):
        kwargs["initializer"] = tf.compat.v1.constant_initializer(TRANSITIONS)
        return getter(name, *args, **kwargs)

    if mode == common.ModeKeys.PREDICT:
        transitions = tf.compat.v1.get_variable("transitions", [4, 4])
        tags, _ = crf.crf_decode(features["scores"], transitions, features["lengths"])
        return common.EstimatorSpec(mode, predictions={"tags": tags})
    with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), custom_getter=reference_transitions):
        log_likelihood, _ = crf.crf_log_likelihood(features["scores"], labels, features["lengths"])
    loss = -tf.reduce_sum(log_likelihood)
    return common.EstimatorSpec(mode, loss=loss,
                                train_op=tf1_train.GradientDescentOptimizer(1.0).minimize(loss))


def test_a_model_fn_trains_the_transitions_contrib_made_under_their_name(tmp_path):
    features = {"scores": INPUTS, "lengths": np.array(LENGTHS[""], np.int32)}
    est = common.Estimator(_model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((features, TAGS)), steps=1)
    assert sorted(est.get_variable_names()) == ["global_step", "transitions"]
    np.testing.assert_allclose(est.get_variable_value("transitions") - TRANSITIONS, REFERENCE["grad_transitions"],
                               rtol=1e-4, atol=1e-5)  # descending -log-likelihood at rate 1: up by its gradient
    predicted = next(est.predict(lambda: tf.data.Dataset.from_tensors(features), yield_single_examples=False))
    moved = est.get_variable_value("transitions")
    assert predicted["tags"].tolist() == crf.crf_decode(INPUTS, moved, np.array(LENGTHS[""]))[0].numpy().tolist()
