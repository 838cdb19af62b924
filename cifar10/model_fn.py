"""The CIFAR-10 ResNet model_fn: one tower's loss, predictions and metrics.

loss = mean cross-entropy + weight_decay * sum of l2_loss over every
trainable variable (batch-norm scales and offsets included), as in the
official example. Learning rate: `piecewise` (the official schedule:
learning_rate x 1, 0.1, 0.01, 0.002 after 82, 123 and 300 epochs) or
`exponential`.

params: num_layers, data_format, batch_norm_decay, batch_norm_epsilon,
weight_decay, optimizer ("momentum" | "adam"), momentum, learning_rate,
lr_schedule, batches_per_epoch (piecewise), decay_steps, decay_rate
(exponential).
"""

import keras
import tensorflow as tf

import common
from cifar10 import resnet
from common.jobs import optimizers, schedules
from common.spec import metrics

LR_SCHEDULES = ("piecewise", "exponential")
PIECEWISE_EPOCHS = (82, 123, 300)
PIECEWISE_MULTIPLIERS = (1, 0.1, 0.01, 0.002)


def learning_rate_schedule(params):
    """The --lr_schedule's schedule; piecewise drops at the official example's epochs."""
    if params["lr_schedule"] not in LR_SCHEDULES:
        raise ValueError(f"--lr_schedule={params['lr_schedule']!r} is not one of {', '.join(LR_SCHEDULES)}")
    return schedules.by_name(
        params["lr_schedule"], params["learning_rate"], params.get("decay_steps"), params.get("decay_rate"),
        staircase=True, boundaries=[params.get("batches_per_epoch", 0) * epochs for epochs in PIECEWISE_EPOCHS],
        multipliers=PIECEWISE_MULTIPLIERS)


def model_fn(features, labels, mode, params):
    net = common.get_module("resnet", lambda: resnet.ResNetCifar10(
        params["num_layers"], data_format=params["data_format"],
        batch_norm_decay=params["batch_norm_decay"], batch_norm_epsilon=params["batch_norm_epsilon"]).build())
    logits = tf.cast(net(features, training=mode == common.ModeKeys.TRAIN), tf.float32)
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    loss += params["weight_decay"] * tf.add_n([tf.nn.l2_loss(v) for v in net.trainable_variables])
    learning_rate = learning_rate_schedule(params)(common.get_global_step())
    optimizer = common.get_optimizer(lambda: optimizers.make_optimizer(
        params["optimizer"], params["momentum"], params.get("clip_global_norm")))
    return common.EstimatorSpec(
        mode, predictions=predictions, loss=loss, optimizer=optimizer, learning_rate=learning_rate,
        eval_metric_ops={"accuracy": metrics.accuracy(labels, predictions["classes"])})
