"""TensorFlow's private state, set only for a context: a variable's op, tensors by identity."""

import pytest
import tensorflow as tf

from common.internals import tensorflow_internals


def test_an_eager_variable_has_an_op_only_inside_the_context():
    variable = tf.Variable(1.0, name="weights")
    with pytest.raises(AttributeError):
        variable.op  # noqa: B018  (TensorFlow's own: no op for an eager variable)
    with tensorflow_internals.variable_ops():
        assert variable.op.name == "weights" and variable.op.type == "VarHandleOp"
    with pytest.raises(AttributeError):
        variable.op  # noqa: B018


def test_tensors_hash_by_identity_only_inside_the_context():
    @tf.function
    def traced():
        with tensorflow_internals.tensors_by_identity():
            x = tf.constant([1.0, 2.0])
            return {x: 1}[x] + len({x, x})
    assert int(traced()) == 2
    with pytest.raises(TypeError):
        {tf.constant([1.0]): 1}
