"""A step's checks: a loss that trains nothing, a gradient that is not finite, a tensor no graph holds."""

import types

import numpy as np
import pytest
import tensorflow as tf

from common.engine import step_checks


def test_a_loss_without_gradients_is_refused_naming_the_variables():
    variables = types.SimpleNamespace(optimizer=object(), trainable=[types.SimpleNamespace(name=f"w{i}")
                                                                     for i in range(7)])
    with pytest.raises(ValueError, match=r"depends on none of the 7 variables it trains \(w0, w1, w2, w3, w4 and 2 "
                                         r"more\)"):
        step_checks.refuse_a_loss_without_gradients(types.SimpleNamespace(grads=[None] * 7), variables)
    step_checks.refuse_a_loss_without_gradients(types.SimpleNamespace(grads=[None] * 6 + [tf.ones(1)]), variables)


def test_the_loss_turns_nan_when_any_gradient_is_not_finite():
    loss = tf.constant(0.5)
    finite = [tf.ones([2]), None, tf.IndexedSlices(tf.ones([1, 2]), tf.constant([0]), tf.constant([3, 2]))]
    assert step_checks.nan_unless_finite(loss, finite, "/cpu:0").numpy() == 0.5
    poisoned = finite[:2] + [tf.IndexedSlices(tf.constant([[np.inf, 1.0]]), tf.constant([0]), tf.constant([3, 2]))]
    assert np.isnan(step_checks.nan_unless_finite(loss, poisoned, "/cpu:0").numpy())
    assert step_checks.nan_unless_finite(loss, [None], "/cpu:0").numpy() == 0.5


def test_a_named_tensor_is_found_under_the_tower_scope_or_refused():
    with tf.Graph().as_default():
        with tf.name_scope("tower_0"):
            logits = tf.identity(tf.zeros([2]), name="logits")
        assert step_checks.graph_tensors(["logits"], "tower_0") == {"logits": logits}
        with pytest.raises(ValueError, match="asks for the tensor 'probs', which model_fn's graph does not"):
            step_checks.graph_tensors(["probs"], "tower_0")
