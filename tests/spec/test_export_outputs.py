"""Export outputs check what they are given: float scores, string classes, float regression values."""

import pytest
import tensorflow as tf

import common


def test_output_constructors_check_their_tensors():
    with pytest.raises(ValueError, match="classes must be a string tensor, got int64"):
        common.ClassificationOutput(classes=tf.zeros([2, 3], tf.int64))
    with pytest.raises(ValueError, match="give scores, classes or both"):
        common.ClassificationOutput()
    with pytest.raises(ValueError, match="value must be a float tensor, got int32"):
        common.RegressionOutput(tf.zeros([2], tf.int32))
