"""tf.contrib.layers' initializers draw as TF1's formulas say: uniform within sqrt(3 * factor / n), truncated
normal of deviation sqrt(1.3 * factor / n), n the chosen fan times a convolution's window."""

import math

import numpy as np
import pytest
import tensorflow as tf

from common.contrib import initializers


def test_he_by_default_truncated_normal_over_the_fan_in_times_the_window():
    values = initializers.variance_scaling_initializer(seed=1)([3, 3, 64, 32]).numpy()
    sigma = math.sqrt(1.3 * 2.0 / (3 * 3 * 64))
    assert np.abs(values).max() <= 2 * sigma + 1e-6  # (truncated at two deviations)
    assert values.std() == pytest.approx(0.8796 * sigma, rel=0.03)  # (a normal truncated at 2 sigma keeps 0.88)


@pytest.mark.parametrize("mode, n", [("FAN_IN", 200), ("FAN_OUT", 300), ("FAN_AVG", 250)])
def test_uniform_within_the_limit_of_each_mode(mode, n):
    values = initializers.variance_scaling_initializer(2.0, mode, uniform=True, seed=2)([200, 300]).numpy()
    limit = math.sqrt(3.0 * 2.0 / n)
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.99 * limit


def test_xavier_and_its_conv2d_alias_are_glorots_uniform_draw():
    tf.random.set_seed(5)
    ours = initializers.xavier_initializer_conv2d(seed=7)([4, 6]).numpy()
    tf.random.set_seed(5)
    np.testing.assert_array_equal(ours, tf.compat.v1.glorot_uniform_initializer(seed=7)([4, 6]).numpy())


def test_a_mode_or_dtype_tf1_refused_is_refused():
    with pytest.raises(TypeError, match="Unknown mode FAN_MAX"):
        initializers.variance_scaling_initializer(mode="FAN_MAX")
    with pytest.raises(TypeError, match="non-floating point type"):
        initializers.variance_scaling_initializer(dtype=tf.int32)
