"""Mixed precision: the compute dtype, and loss scaling for float16.

bfloat16 keeps float32's exponent range and needs no loss scaling; float16
does, so under a float16 policy the Estimator's optimizer is wrapped in
keras.optimizers.LossScaleOptimizer and each tower's gradients are taken of
the scaled loss (the wrapper unscales them, and skips an update whose
gradients are not finite while it lowers the scale). Variables stay float32.
"""

import keras

DTYPES = ("float32", "bfloat16", "float16")


def set_compute_dtype(dtype):
    """Sets Keras's global policy: float32, mixed_bfloat16 or mixed_float16."""
    if dtype not in DTYPES:
        raise ValueError(f"--dtype={dtype!r} is not one of {', '.join(DTYPES)}")
    keras.mixed_precision.set_global_policy("float32" if dtype == "float32" else f"mixed_{dtype}")


def needs_loss_scaling():
    return keras.mixed_precision.global_policy().compute_dtype == "float16"


def with_loss_scaling(optimizer):
    """The optimizer, wrapped for float16 when the policy calls for it."""
    if needs_loss_scaling() and not scales_loss(optimizer):
        return keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def scales_loss(optimizer):
    """Whether the optimizer does loss scaling; such an optimizer also skips an
    update whose gradients are not finite (that is how it finds the scale too high)."""
    return isinstance(optimizer, keras.optimizers.LossScaleOptimizer)


def loss_scale_variables(optimizer):
    """The Keras variables `scaled` reads: the dynamic loss scale, if any."""
    if scales_loss(optimizer) and optimizer.built:
        return [optimizer.dynamic_scale]
    return []


def scaled(loss, optimizer):
    """The loss to differentiate: scaled when the optimizer does loss scaling."""
    if scales_loss(optimizer):
        return optimizer.scale_loss(loss)
    return loss
