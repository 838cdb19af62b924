"""The MNIST CNN as an Estimator model_fn (one tower's computation).

Conv 5x5x32 relu, max-pool 2, Conv 5x5x64 relu, max-pool 2, Dense 1024
relu, Dropout 0.5, Dense classes: the network of TensorFlow's original
MNIST estimator tutorial.

params: num_classes, data_format, label_smoothing, optimizer ("adam" | "momentum"),
learning_rate, momentum, lr_schedule ("constant" | "exponential" |
"piecewise") with decay_steps, decay_rate, lr_boundaries, lr_multipliers.
"""

import keras
import tensorflow as tf

import common
from common.jobs import optimizers, schedules
from common.spec import metrics


def build_cnn(num_classes, data_format="channels_last"):
    layers = keras.layers
    conv = dict(kernel_size=5, padding="same", activation="relu", data_format=data_format)
    pool = dict(pool_size=2, strides=2, padding="same", data_format=data_format)
    return keras.Sequential([
        layers.Conv2D(32, name="conv1", **conv),
        layers.MaxPooling2D(name="pool1", **pool),
        layers.Conv2D(64, name="conv2", **conv),
        layers.MaxPooling2D(name="pool2", **pool),
        layers.Flatten(name="flatten"),
        layers.Dense(1024, activation="relu", name="dense"),
        layers.Dropout(0.5, name="dropout"),
        layers.Dense(num_classes, name="logits"),
    ], name="mnist_cnn")


def learning_rate_schedule(params):
    return schedules.by_name(
        params.get("lr_schedule", "constant"), params["learning_rate"],
        decay_steps=params.get("decay_steps"), decay_rate=params.get("decay_rate"),
        boundaries=params.get("lr_boundaries", ()), multipliers=params.get("lr_multipliers", ()))


def model_fn(features, labels, mode, params):
    images = features
    data_format = params.get("data_format", "channels_last")
    if data_format == "channels_first":
        images = tf.transpose(images, [0, 3, 1, 2])
    net = common.get_module("cnn", lambda: build_cnn(params["num_classes"], data_format))
    logits = tf.cast(net(images, training=mode == common.ModeKeys.TRAIN), tf.float32)
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    smoothing = params.get("label_smoothing", 0.0)
    targets = tf.one_hot(labels, params["num_classes"]) * (1 - smoothing) + smoothing / params["num_classes"]
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=targets, logits=logits))
    learning_rate = learning_rate_schedule(params)(common.get_global_step())
    optimizer = common.get_optimizer(
        lambda: optimizers.make_optimizer(params.get("optimizer", "adam"), params.get("momentum", 0.9),
                                          params.get("clip_global_norm")))
    return common.EstimatorSpec(
        mode, predictions=predictions, loss=loss, optimizer=optimizer, learning_rate=learning_rate,
        eval_metric_ops={"accuracy": metrics.accuracy(labels, predictions["classes"])})
