"""clip_gradients_by_norm: tf.contrib.estimator's gradient clipping, for any optimizer a spec carries."""

import keras

from common.tf1_runtime.optimizer import Optimizer as Tf1Optimizer


def clip_gradients_by_norm(optimizer, clip_norm):
    """An optimizer that scales each step's averaged gradients so their global norm is at most clip_norm, as
    tf.contrib.estimator's clip_gradients_by_norm (Keras's global_clipnorm, applied after loss scaling is
    undone), e.g. in model_fn:

        optimizer=common.get_optimizer(lambda: common.clip_gradients_by_norm(keras.optimizers.SGD(0.1), 5.0))

    Args:
      optimizer: a Keras optimizer, or a TF1 one (common.tf1.train's), which is changed in place.
      clip_norm: the largest global norm, > 0.
    Returns:
      The same optimizer, clipping.
    Raises:
      ValueError: clip_norm is not positive, or the Keras optimizer already clips.
      TypeError: optimizer is neither a Keras nor a TF1 optimizer.
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
