"""Mixed precision: the policy a --dtype names, and loss scaling only where float16 needs it."""

import keras
import pytest
import tensorflow as tf

from common.devices import precision


@pytest.fixture
def restore_policy():
    before = keras.mixed_precision.global_policy()
    yield
    keras.mixed_precision.set_global_policy(before)


@pytest.mark.parametrize("dtype, policy, scaling", [
    ("float32", "float32", False), ("bfloat16", "mixed_bfloat16", False), ("float16", "mixed_float16", True)])
def test_each_dtype_sets_its_policy_and_only_float16_scales_the_loss(restore_policy, dtype, policy, scaling):
    precision.set_compute_dtype(dtype)
    assert keras.mixed_precision.global_policy().name == policy
    assert precision.needs_loss_scaling() == scaling
    optimizer = precision.with_loss_scaling(keras.optimizers.SGD(0.1))
    assert precision.scales_loss(optimizer) == scaling
    assert precision.with_loss_scaling(optimizer) is optimizer  # wrapped once
    loss = tf.constant(2.0)
    if scaling:
        optimizer.build([keras.Variable(1.0)])
        assert float(precision.scaled(loss, optimizer)) == 2.0 * float(optimizer.dynamic_scale.numpy())
        assert precision.loss_scale_variables(optimizer) == [optimizer.dynamic_scale]
    else:
        assert precision.scaled(loss, optimizer) is loss and precision.loss_scale_variables(optimizer) == []


def test_an_unknown_dtype_is_refused_naming_the_flag():
    with pytest.raises(ValueError, match="--dtype='float64' is not one of float32, bfloat16, float16"):
        precision.set_compute_dtype("float64")
