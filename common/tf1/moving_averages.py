"""tf.train.ExponentialMovingAverage in model_fn: its averages follow the optimizer's update, once a step.

TF1 programs (the official TPU models: ResNet, MobileNet, EfficientNet)
averaged their weights after each step:

    with tf.control_dependencies([train_op]):
        train_op = ema.apply(tf.trainable_variables())

so each shadow ("<variable>/ExponentialMovingAverage") moved towards the
updated weights, with the global step already counted (`num_updates`). Here a
train tower's call does not update: the framework applies the averaged
gradients after every tower. So `apply`, called in a train tower, is
recorded (CallRecord.after_update) and done by the framework once per step,
after the update and the step's count (common.engine.model_builder); called
anywhere else it is TensorFlow's own. This module replaces the method on
TensorFlow's class (tf.train and tf.compat.v1.train name the same class), so
a program gets it unchanged, upgraded or not.
"""

import functools

import tensorflow as tf
from tensorflow.python.training import moving_averages

from common.variables import registry

_TENSORFLOW_APPLY = moving_averages.ExponentialMovingAverage.apply


@functools.wraps(_TENSORFLOW_APPLY)
def _apply(self, var_list=None):
    if not registry.deferring_updates():
        return _TENSORFLOW_APPLY(self, var_list)
    if var_list is None:  # (TF1: the graph's trainable variables when apply is called)
        var_list = tf.compat.v1.trainable_variables()
    registry.active_registry().call.after_update.append(functools.partial(_TENSORFLOW_APPLY, self, list(var_list)))
    return tf.no_op(name=self.name)


moving_averages.ExponentialMovingAverage.apply = _apply
