"""TF1's update rules as Keras optimizers, step by step against numpy: momentum scales its accumulator by
the current rate (a rate drop acts at once), RMSProp starts its mean square at 1."""

import keras
import numpy as np
import pytest

from common.tf1.update_rules import MomentumTF1, RMSPropTF1

GRADIENTS = [np.array([0.5, -1.0]), np.array([0.25, 2.0]), np.array([-1.5, 0.5])]
RATES = [0.1, 0.1, 0.01]  # a drop before the last step


def steps(optimizer):
    """The variable after applying GRADIENTS at RATES, from zero."""
    variable = keras.Variable(np.zeros(2, np.float32))
    for gradient, rate in zip(GRADIENTS, RATES):
        optimizer.learning_rate = rate
        optimizer.apply([gradient.astype(np.float32)], [variable])
    return variable.numpy()


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_is_tf1s_rule(nesterov):
    w, accumulator = np.zeros(2), np.zeros(2)
    for g, lr in zip(GRADIENTS, RATES):
        accumulator = 0.9 * accumulator + g
        w -= lr * (g + 0.9 * accumulator if nesterov else accumulator)
    np.testing.assert_allclose(steps(MomentumTF1(0.1, 0.9, use_nesterov=nesterov)), w, rtol=1e-6)


def test_rmsprop_is_tf1s_rule_with_its_mean_square_starting_at_one():
    w, mean_square, moment = np.zeros(2), np.ones(2), np.zeros(2)
    for g, lr in zip(GRADIENTS, RATES):
        mean_square = 0.9 * mean_square + 0.1 * g * g
        moment = 0.5 * moment + lr * g / np.sqrt(mean_square + 1e-10)
        w -= moment
    np.testing.assert_allclose(steps(RMSPropTF1(0.1, momentum=0.5)), w, rtol=1e-6)
