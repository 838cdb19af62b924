"""contrib.layers' functions take their arguments from slim's arg_scope, as TF1 declared them, and share it with
slim's function of the same name, which in TF1 they were."""

import numpy as np
import tensorflow as tf

from common.contrib import layers as contrib
from common.contrib import slim


def test_arg_scope_sets_contrib_layers_arguments_the_call_does_not_give():
    ones = tf.ones([2, 8])
    with slim.arg_scope([contrib.dropout], is_training=False):
        kept = contrib.dropout(ones, keep_prob=0.1)
        dropped = contrib.dropout(ones, keep_prob=0.5, is_training=True, seed=1)  # (the call's own wins)
    np.testing.assert_array_equal(kept.numpy(), ones.numpy())
    assert set(np.unique(dropped.numpy())) <= {0.0, 2.0} and 0.0 in dropped.numpy()
    assert contrib.convolution2d is contrib.conv2d


def test_an_arg_scope_set_on_slims_function_reaches_contribs_and_the_reverse():
    """deeplab-v3: resnet_arg_scope sets normalizer_fn on slim.conv2d, the program calls contrib.layers' conv2d;
    is_training set on contrib.layers' batch_norm reaches slim.conv2d's batch norm."""
    with tf.Graph().as_default() as graph:
        x = tf.compat.v1.placeholder(tf.float32, [2, 8, 8, 3])
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm):
            with slim.arg_scope([contrib.batch_norm], is_training=False):
                contrib.conv2d(x, 4, [1, 1], scope="a")
                slim.conv2d(x, 4, [1, 1], scope="b")
        with slim.arg_scope([slim.max_pool2d], stride=1):
            pooled = contrib.max_pool2d(x, [2, 2])
        names = sorted(v.op.name for v in tf.compat.v1.global_variables())
        training = [op.get_attr("is_training") for op in graph.get_operations()
                    if op.type.startswith("FusedBatchNorm") and op.name.startswith("b/")]
    assert names == ["a/BatchNorm/beta", "a/BatchNorm/moving_mean", "a/BatchNorm/moving_variance", "a/weights",
                     "b/BatchNorm/beta", "b/BatchNorm/moving_mean", "b/BatchNorm/moving_variance", "b/weights"]
    assert training == [False] and pooled.shape.as_list() == [2, 7, 7, 3]
