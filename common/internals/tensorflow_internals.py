"""The one place TensorFlow's private state is read or set.

TensorFlow's public API has no way to give an eager variable the `op` TF1
code reads its name from (`var.op.name`; TensorFlow raises where the
variable was made outside the graph a function traces), nor to make tensors
compare and hash by identity for a while (tf.Tensor._USE_EQUALITY is the
switch behind tf.compat.v1.disable_tensor_equality, which is process-wide).
Each is done here, and only while the framework runs TF1 code (a call of
model_fn, a TF1 hook, TF1's Saver over partitioned variables), so a
TensorFlow that moves it breaks this module only.
"""

import tensorflow as tf
from tensorflow.python.ops import resource_variable_ops

from common.internals.scoped_patches import ScopedPatch


class VariableOp:
    """What TF1 code reads of a variable's op in its graph (`var.op.name`: slim's summaries, many TF1
    optimizers, name filters), for a variable model_fn's store made outside the function graph, whose eager
    handle has no op."""

    type = "VarHandleOp"

    def __init__(self, variable):
        self.name = variable.name.split(":")[0]
        self.device = variable.device
        self.outputs = [variable.handle]


_GRAPH_OP = resource_variable_ops.BaseResourceVariable.op


def _op(variable):
    try:
        return _GRAPH_OP.fget(variable)
    except AttributeError:  # "Tensor.op is undefined when eager execution is enabled"
        return VariableOp(variable)


_VARIABLE_OP = ScopedPatch(resource_variable_ops.BaseResourceVariable, "op", property(_op, doc=_GRAPH_OP.__doc__))


def variable_ops():
    """A context in which a variable made outside the function graph has the `op` TF1 code reads (VariableOp),
    where TensorFlow raises: entered while model_fn or a TF1 hook's method runs, and while TF1's Saver writes
    partitioned variables (it reads a slice's op.type); TensorFlow offers no other way than its class's
    property."""
    return _VARIABLE_OP.active()


_TENSORS_BY_IDENTITY = ScopedPatch(tf.Tensor, "_USE_EQUALITY", False)


def tensors_by_identity():
    """A context in which tensors and tf.Variables compare and hash by identity, as in TF1's graph (TF1 code keys
    dicts by variable and filters with `v not in [...]`): TensorFlow's switch behind
    tf.compat.v1.disable_tensor_equality, off for the context only."""
    return _TENSORS_BY_IDENTITY.active()
