"""tf.contrib.layers' initializers, as TF1 computed them.

`variance_scaling_initializer(factor, mode, uniform)` drew from a uniform
range of sqrt(3 * factor / n) or a truncated normal of standard deviation
sqrt(1.3 * factor / n), n the fan in, out or their average (a convolution's
fans times its window); `xavier_initializer` (and its alias
`xavier_initializer_conv2d`) is that with factor 1 over the average fan:
Glorot's. The TPU models (squeezenet, amoeba_net) and many TF1 programs
initialized their kernels with them.
"""

import math

import tensorflow as tf

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=tf.float32):
    """An initializer of variance factor / n (He's, by default), n chosen by `mode`."""
    if not tf.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [{', '.join(_MODES)}]")

    def initializer(shape, dtype=dtype, partition_info=None):
        del partition_info
        shape = [int(d) for d in shape]
        fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1]) if shape else 1.0
        fan_out = float(shape[-1]) if shape else 1.0
        window = math.prod(shape[:-2])
        fans = {"FAN_IN": fan_in * window, "FAN_OUT": fan_out * window, "FAN_AVG": (fan_in + fan_out) * window / 2}
        n = fans[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return tf.random.uniform(shape, -limit, limit, dtype=dtype, seed=seed)
        return tf.random.truncated_normal(shape, 0.0, math.sqrt(1.3 * factor / n), dtype=dtype, seed=seed)
    return initializer


def xavier_initializer(uniform=True, seed=None, dtype=tf.float32):
    """Glorot's initializer (contrib's name): factor 1 over the average fan."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer
