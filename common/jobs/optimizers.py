"""The optimizers the mains offer by name (--optimizer)."""

import keras

from common.estimator.clipping import clip_gradients_by_norm
from common.tf1.update_rules import MomentumTF1

OPTIMIZERS = ("momentum", "adam")


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
