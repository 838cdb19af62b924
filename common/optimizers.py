"""The optimizers the mains offer by name (--optimizer)."""

import keras

OPTIMIZERS = ("momentum", "adam")


def make_optimizer(name, momentum=0.9):
    """A Keras optimizer built with learning rate 0: model_fns give the rate
    of each step as EstimatorSpec.learning_rate (a schedule of the global step)."""
    if name == "momentum":
        return keras.optimizers.SGD(learning_rate=0.0, momentum=momentum)
    if name == "adam":
        return keras.optimizers.Adam(learning_rate=0.0)
    raise ValueError(f"--optimizer={name!r} is not one of {', '.join(OPTIMIZERS)}")
