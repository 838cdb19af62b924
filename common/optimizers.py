"""The optimizers the mains offer by name (--optimizer), and gradient clipping."""

import keras

from common.tf1 import train as tf1_train
from common.tf1.update_rules import MomentumTF1

OPTIMIZERS = ("momentum", "adam")


def clip_gradients_by_norm(optimizer, clip_norm):
    """The optimizer, made to scale the averaged gradients of each step so their
    global norm is at most clip_norm (tf.contrib.estimator's name; Keras's
    global_clipnorm, applied after loss scaling is undone). Takes a Keras
    optimizer or a common.tf1.train one, e.g. in model_fn:

        optimizer=common.get_optimizer(lambda: common.clip_gradients_by_norm(keras.optimizers.SGD(0.1), 5.0))
    """
    if clip_norm is None or not clip_norm > 0:
        raise ValueError(f"clip_gradients_by_norm: clip_norm must be > 0, got {clip_norm}")
    if isinstance(optimizer, tf1_train.Optimizer):
        make = optimizer._make
        optimizer._make = lambda learning_rate: clip_gradients_by_norm(make(learning_rate), clip_norm)
        return optimizer
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError(f"clip_gradients_by_norm: {optimizer!r} is not a Keras or common.tf1.train optimizer")
    if optimizer.clipnorm or optimizer.clipvalue:
        raise ValueError(f"clip_gradients_by_norm: the optimizer already clips (clipnorm={optimizer.clipnorm}, "
                         f"clipvalue={optimizer.clipvalue}); give one rule")
    optimizer.global_clipnorm = float(clip_norm)
    return optimizer


def make_optimizer(name, momentum=0.9, clip_norm=None):
    """An optimizer built with learning rate 0: model_fns give the rate of each
    step as EstimatorSpec.learning_rate (a schedule of the global step).

    momentum is TF1's MomentumOptimizer rule, as the official CIFAR-10 example
    trained with: the accumulator sums raw gradients and the current rate
    scales it, so a rate drop takes effect at once (Keras's SGD keeps moving
    at the old rate's velocity for a while). clip_norm: see clip_gradients_by_norm.
    """
    if name == "momentum":
        optimizer = MomentumTF1(learning_rate=0.0, momentum=momentum)
    elif name == "adam":
        optimizer = keras.optimizers.Adam(learning_rate=0.0)
    else:
        raise ValueError(f"--optimizer={name!r} is not one of {', '.join(OPTIMIZERS)}")
    return optimizer if clip_norm is None else clip_gradients_by_norm(optimizer, clip_norm)
