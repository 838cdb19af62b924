"""Per-example seeds, so that a seed makes random augmentation repeatable.

Stateful random ops (tf.image.random_crop, ...) inside a parallel tf.data
map draw from one generator in whatever order the map's threads run, so
the same --random_seed gives different crops on every run. Pairing each
example with its own seed from `tf.data.Dataset.random` and using stateless
ops keyed by it gives the same crops every run, and the seeds' position is
saved with the input pipeline's state.
"""

import tensorflow as tf


def with_element_seeds(dataset, seed=None):
    """dataset of x -> dataset of (x, seed), seed a [2] int64 tensor for stateless ops.

    seed=None follows the global seed (tf.random.set_seed), or is random.
    """
    return tf.data.Dataset.zip(dataset, tf.data.Dataset.random(seed=seed).batch(2))
