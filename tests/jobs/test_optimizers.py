"""The mains' --optimizer: momentum is TF1's rule, adam Keras's, at rate 0 until a spec gives one."""

import keras
import pytest

from common.jobs import optimizers
from common.tf1.update_rules import MomentumTF1


def test_the_names_make_their_optimizers_and_clipping_is_applied():
    momentum = optimizers.make_optimizer("momentum", momentum=0.8)
    assert isinstance(momentum, MomentumTF1) and momentum.momentum == 0.8
    assert float(momentum.learning_rate.numpy()) == 0.0
    adam = optimizers.make_optimizer("adam", clip_norm=2.5)
    assert isinstance(adam, keras.optimizers.Adam) and adam.global_clipnorm == 2.5


def test_an_unknown_name_is_refused_naming_the_flag():
    with pytest.raises(ValueError, match="--optimizer='sgd' is not one of momentum, adam"):
        optimizers.make_optimizer("sgd")
