"""contrib.crf's linear-chain CRF: the log-likelihood of tag sequences and their Viterbi decoding.

tf.contrib went with TensorFlow 2.0 and its CRF moved to TensorFlow Addons,
which no longer installs on TensorFlow 2.21. These are contrib's functions
(1.15's, which handle length-1 and length-0 sequences) over [batch, time,
num_tags] unary scores and a [num_tags, num_tags] transition matrix, written
with tf.scan: a sequence's steps past its length leave its state as it was,
as dynamic_rnn's did in contrib. crf_log_likelihood without a transition
matrix makes "transitions" in the TF1 variable store, as contrib did.
"""

import numpy as np
import tensorflow as tf


def _mask(lengths, max_length):
    return tf.sequence_mask(lengths, max_length, dtype=tf.float32)


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """Each sequence's sum of its tags' unary scores up to its length."""
    scores = tf.gather(inputs, tag_indices, batch_dims=2)
    return tf.reduce_sum(scores * _mask(sequence_lengths, tf.shape(tag_indices)[1]), 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """Each sequence's sum of its tag-to-tag transition scores up to its length."""
    num_tags = tf.shape(transition_params)[0]
    flat = tf.cast(tag_indices[:, :-1], tf.int32) * num_tags + tf.cast(tag_indices[:, 1:], tf.int32)
    scores = tf.gather(tf.reshape(transition_params, [-1]), flat)
    return tf.reduce_sum(scores * _mask(sequence_lengths, tf.shape(tag_indices)[1])[:, 1:], 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of each tag sequence ([batch])."""
    unary = crf_unary_score(tag_indices, sequence_lengths, inputs)
    if tf.compat.dimension_value(inputs.shape[2]) == 1:
        return unary
    return unary + crf_binary_score(tag_indices, sequence_lengths, transition_params)


def _steps(inputs, sequence_lengths):
    """The time steps after the first, time-major, each with the rows still inside their sequence."""
    rest = tf.transpose(inputs[:, 1:, :], [1, 0, 2])
    inside = tf.transpose(tf.sequence_mask(tf.maximum(sequence_lengths - 1, 0), tf.shape(rest)[0]))
    return rest, inside


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """The log partition function of each sequence (the forward algorithm); 0 where a length is 0."""
    inputs = tf.convert_to_tensor(inputs)
    rest, inside = _steps(inputs, sequence_lengths)

    def forward(alphas, step):
        unary, keep = step
        moved = unary + tf.reduce_logsumexp(alphas[:, :, None] + transition_params[None], 1)
        return tf.where(keep[:, None], moved, alphas)

    alphas = tf.foldl(forward, (rest, inside), initializer=inputs[:, 0, :])
    log_norm = tf.reduce_logsumexp(alphas, 1)
    return tf.where(sequence_lengths <= 0, tf.zeros_like(log_norm), log_norm)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """(the log-likelihood of each tag sequence, the transition matrix used)."""
    inputs = tf.convert_to_tensor(inputs)
    if transition_params is None:
        num_tags = tf.compat.dimension_value(inputs.shape[2])
        transition_params = tf.compat.v1.get_variable("transitions", [num_tags, num_tags])
    log_likelihood = (crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
                      - crf_log_norm(inputs, sequence_lengths, transition_params))
    return log_likelihood, transition_params


def crf_decode(potentials, transition_params, sequence_length):
    """(the highest-scoring tag sequence of each row, int32 [batch, time], 0 past its length; its score)."""
    potentials = tf.convert_to_tensor(potentials)
    steps = tf.transpose(potentials, [1, 0, 2])
    time = tf.shape(steps)[0]
    moving = tf.transpose(tf.sequence_mask(sequence_length, time)) & (tf.range(time) > 0)[:, None]

    def forward(carried, step):  # (every step is scanned, the first kept as it is, so no scan is ever empty)
        score, _ = carried
        unary, keep = step
        candidates = score[:, :, None] + transition_params[None]
        moved = unary + tf.reduce_max(candidates, 1)
        pointers = tf.cast(tf.argmax(candidates, 1), tf.int32)
        return tf.where(keep[:, None], moved, score), tf.where(keep[:, None], pointers, 0)

    first = steps[0]
    scores, pointers = tf.scan(forward, (steps, moving), initializer=(first, tf.zeros_like(first, tf.int32)))
    last_score = scores[-1]
    pointers = tf.reverse_sequence(pointers, sequence_length, seq_axis=0, batch_axis=1)  # last step first

    def backward(carried, row_pointers):
        tag, _ = carried
        return tf.gather(row_pointers, tag, batch_dims=1), tag

    last_tag = tf.cast(tf.argmax(last_score, 1), tf.int32)
    _, tags = tf.scan(backward, pointers, initializer=(last_tag, last_tag))
    kept = tf.transpose(tf.sequence_mask(tf.maximum(sequence_length, 1), time))  # (a length-0 row: its best tag)
    tags = tf.transpose(tf.where(kept, tags, 0))
    return tf.reverse_sequence(tags, sequence_length, seq_axis=1, batch_axis=0), tf.reduce_max(last_score, 1)


def viterbi_decode(score, transition_params):
    """contrib's NumPy decoding of one sequence ([time, num_tags]): (its best tags as a list, their score)."""
    trellis = np.zeros_like(score)
    pointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        candidates = np.expand_dims(trellis[t - 1], 1) + transition_params
        trellis[t] = score[t] + np.max(candidates, 0)
        pointers[t] = np.argmax(candidates, 0)
    viterbi = [np.argmax(trellis[-1])]
    for row in reversed(pointers[1:]):
        viterbi.append(row[viterbi[-1]])
    viterbi.reverse()
    return viterbi, np.max(trellis[-1])
