"""Keras 2's SequenceFeatures as a Keras 3 layer: its numbers, lengths and variable names as TF 2.15's (recorded
there with tf.keras.experimental.SequenceFeatures), and inside model_fn with a recurrent layer, on two towers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.layers import SequenceFeatures
from tests import models

fc = tf.feature_column


def _columns():
    words = fc.sequence_categorical_column_with_vocabulary_list("words", ["a", "b", "c"])
    return [fc.sequence_numeric_column("level", shape=(2,)),
            fc.indicator_column(fc.sequence_categorical_column_with_identity("ids", 4)),
            fc.embedding_column(words, 2, initializer=tf.constant_initializer(np.arange(6).reshape(3, 2) / 10.0))]


def test_the_output_lengths_and_variable_names_are_keras_2s():
    features = {
        "words": tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], ["b", "c", "a"], [2, 3]),
        "ids": tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 1, 2], tf.int64), [2, 3]),
        "level": tf.sparse.SparseTensor([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]],
                                        [1., 2., 3., 4., 5., 6.], [2, 6]),
    }
    layer = SequenceFeatures(_columns())
    output, length = layer(features)
    np.testing.assert_allclose(output.numpy(), [  # TF 2.15: ids_indicator (4), level (2), words_embedding (2)
        [[0, 0, 0, 1, 1, 2, 0.2, 0.3], [0, 1, 0, 0, 3, 4, 0.4, 0.5], [0, 0, 0, 0, 0, 0, 0, 0]],
        [[0, 0, 1, 0, 5, 6, 0, 0.1], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]], rtol=1e-6)
    assert length.numpy().tolist() == [2, 1]
    assert [w.path for w in layer.weights] == ["sequence_features/words_embedding/embedding_weights"]
    with pytest.raises(ValueError, match="must be a SequenceDenseColumn.*Given: NumericColumn"):
        SequenceFeatures([fc.numeric_column("x")])
    uneven = dict(features, ids=tf.sparse.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([3, 1, 2], tf.int64),
                                                       [2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sequence lengths differ"):
        layer(uneven)


def _model_fn(features, labels, mode):  # as a TF 2.x-era RNN estimator built it: Keras layers inside model_fn
    sequence_input, _ = SequenceFeatures([fc.indicator_column(
        fc.sequence_categorical_column_with_vocabulary_list("chars", ["0", "1", "2"]))])(features)
    logits = common.get_module("out", lambda: keras.Sequential([keras.layers.GRU(4), keras.layers.Dense(3)]))(
        sequence_input)
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.Adam(0.05)))


def test_inside_model_fn_on_two_towers_a_recurrent_model_on_it_learns(tmp_path):
    chars = np.array([["0", "1", "2"], ["1", "2", "0"], ["2", "0", "1"], ["0", "2", "1"]] * 4)
    labels = np.array([2, 0, 1, 1] * 4)  # the last character

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"chars": chars}, labels)).batch(8).repeat()

    est = common.Estimator(_model_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(input_fn, steps=1)
    before = est.evaluate(lambda: input_fn().take(2))["loss"]
    est.train(input_fn, steps=60)
    assert est.evaluate(lambda: input_fn().take(2))["loss"] < 0.3 * before
