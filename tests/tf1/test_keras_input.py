"""tf.keras.layers.Input(tensor=...) in model_fn, as the TPU recommenders started their Keras layers from a tensor:
the chain trains as Keras 2's did; without a tensor it is Keras's own Input."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import keras_input
from common.tf1 import train as tf1_train
from tests import models

FEATURES, LABELS = models.blobs(64, dim=4, classes=2)


def model_fn(features, labels, mode):
    net = keras_input.Input(tensor=tf.concat([features, features * 2.0], axis=1), shape=(8,))
    net = keras.layers.Dense(6, activation="relu", name="hidden")(net)
    logits = keras.layers.Dense(2, name="logits")(net)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return common.EstimatorSpec(mode, loss=loss, predictions={"logits": logits},
                                train_op=tf1_train.AdamOptimizer(0.05).minimize(loss, tf1_train.get_global_step()))


def test_layers_chained_from_a_model_fns_tensor_train_on_two_towers(tmp_path):
    est = common.Estimator(model_fn, str(tmp_path), config=common.RunConfig(tf_random_seed=1,
                                                                           device_plan=models.plan(2)))
    before = est.evaluate(models.eval_input(FEATURES, LABELS, 16))["loss"]
    est.train(models.train_input(FEATURES, LABELS, 16), steps=30)
    assert est.evaluate(models.eval_input(FEATURES, LABELS, 16))["loss"] < before - 0.1
    assert {"model_fn/hidden/kernel", "model_fn/logits/kernel"} <= set(est.get_variable_names())


def test_without_a_tensor_it_is_keras_input_and_a_contradicting_shape_is_named():
    symbolic = keras_input.Input(shape=(3,), name="x")
    assert isinstance(symbolic, keras.KerasTensor) and symbolic.shape == (None, 3)
    given = tf.ones([2, 5])
    np.testing.assert_array_equal(keras_input.Input(tensor=given), given)
    with pytest.raises(ValueError, match=r"Input\(shape=\(4,\), tensor=...\): the tensor's shape is \(2, 5\)"):
        keras_input.Input(shape=(4,), tensor=given)
