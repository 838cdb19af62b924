"""A TF1 contrib-era estimator program, as a slim ResNet fine-tuning script used the pieces around its model:
tf.contrib.image to rotate and shift its training images, tf.contrib.framework.filter_variables to train the
head alone, and pywrap_tensorflow.NewCheckpointReader to read what training left in the model dir."""

import math

import numpy as np
import tensorflow as tf
from tensorflow.python import pywrap_tensorflow

BATCH_SIZE = 4
_RNG = np.random.RandomState(11)
PICTURES = _RNG.rand(8, 5, 5, 1).astype(np.float32)
LABELS = (PICTURES[:, 2, :, 0].sum(axis=1) > 2.5).astype(np.int64)
BODY_KERNEL = (_RNG.randn(25, 3) * 0.3).astype(np.float32)
HEAD_KERNEL = (_RNG.randn(3, 2) * 0.3).astype(np.float32)


def augmented(pictures):
    """Each picture turned a quarter counterclockwise, then moved one pixel right."""
    turned = tf.contrib.image.rotate(pictures, math.pi / 2)
    return tf.contrib.image.translate(turned, [1.0, 0.0])


def input_fn(mode):
    dataset = tf.data.Dataset.from_tensor_slices((PICTURES, LABELS))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(BATCH_SIZE).map(lambda pictures, labels: ({"x": augmented(pictures)}, labels))


def model_fn(features, labels, mode):
    flat = tf.reshape(features["x"], [-1, 25])
    with tf.compat.v1.variable_scope("body"):
        hidden = tf.compat.v1.layers.dense(flat, 3, activation=tf.nn.relu,
                                           kernel_initializer=tf.compat.v1.constant_initializer(BODY_KERNEL))
    with tf.compat.v1.variable_scope("head"):
        logits = tf.compat.v1.layers.dense(hidden, 2,
                                           kernel_initializer=tf.compat.v1.constant_initializer(HEAD_KERNEL))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    head_only = tf.contrib.framework.filter_variables(tf.compat.v1.trainable_variables(), include_patterns=["head"],
                                                      exclude_patterns=["bias"])
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, tf.compat.v1.train.get_global_step(), var_list=head_only)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train(model_dir, steps=3):
    """Trains, then returns {name: value} of every variable in the last checkpoint, read by TF1's reader."""
    estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)
    estimator.train(input_fn, steps=steps)
    reader = pywrap_tensorflow.NewCheckpointReader(tf.train.latest_checkpoint(model_dir))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}
