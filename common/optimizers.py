"""The optimizers the mains offer by name (--optimizer)."""

import keras

from common.tf1.update_rules import MomentumTF1

OPTIMIZERS = ("momentum", "adam")


def make_optimizer(name, momentum=0.9):
    """An optimizer built with learning rate 0: model_fns give the rate of each
    step as EstimatorSpec.learning_rate (a schedule of the global step).

    momentum is TF1's MomentumOptimizer rule, as the official CIFAR-10 example
    trained with: the accumulator sums raw gradients and the current rate
    scales it, so a rate drop takes effect at once (Keras's SGD keeps moving
    at the old rate's velocity for a while).
    """
    if name == "momentum":
        return MomentumTF1(learning_rate=0.0, momentum=momentum)
    if name == "adam":
        return keras.optimizers.Adam(learning_rate=0.0)
    raise ValueError(f"--optimizer={name!r} is not one of {', '.join(OPTIMIZERS)}")
