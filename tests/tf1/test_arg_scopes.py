"""contrib.layers' functions take their arguments from slim's arg_scope, as TF1 declared them."""

import numpy as np
import tensorflow as tf

from common.tf1 import contrib, slim


def test_arg_scope_sets_contrib_layers_arguments_the_call_does_not_give():
    ones = tf.ones([2, 8])
    with slim.arg_scope([contrib.dropout], is_training=False):
        kept = contrib.dropout(ones, keep_prob=0.1)
        dropped = contrib.dropout(ones, keep_prob=0.5, is_training=True, seed=1)  # (the call's own wins)
    np.testing.assert_array_equal(kept.numpy(), ones.numpy())
    assert set(np.unique(dropped.numpy())) <= {0.0, 2.0} and 0.0 in dropped.numpy()
    assert contrib.convolution2d is contrib.conv2d
