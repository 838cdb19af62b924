"""clip_gradients_by_norm: tf.contrib.estimator's gradient clipping, for any optimizer a spec carries."""

import keras

from common.tf1_runtime.optimizer import Optimizer as Tf1Optimizer


def clip_gradients_by_norm(optimizer, clip_norm):
    """The optimizer, made to scale the averaged gradients of each step so their
    global norm is at most clip_norm (tf.contrib.estimator's name; Keras's
    global_clipnorm, applied after loss scaling is undone). Takes a Keras
    optimizer or a common.tf1.train one, e.g. in model_fn:

        optimizer=common.get_optimizer(lambda: common.clip_gradients_by_norm(keras.optimizers.SGD(0.1), 5.0))
    """
    if clip_norm is None or not clip_norm > 0:
        raise ValueError(f"clip_gradients_by_norm: clip_norm must be > 0, got {clip_norm}")
    if isinstance(optimizer, Tf1Optimizer):
        optimizer.clip_norm = float(clip_norm)
        return optimizer
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError(f"clip_gradients_by_norm: {optimizer!r} is not a Keras or common.tf1.train optimizer")
    if optimizer.clipnorm or optimizer.clipvalue:
        raise ValueError(f"clip_gradients_by_norm: the optimizer already clips (clipnorm={optimizer.clipnorm}, "
                         f"clipvalue={optimizer.clipvalue}); give one rule")
    optimizer.global_clipnorm = float(clip_norm)
    return optimizer
