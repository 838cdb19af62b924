"""The one place TensorFlow's private state is read or set.

The TF1 surface needs what TensorFlow's public API does not offer: the graph
collections get_variable's store and scopes live in, TF1's partition info and
a variable's slice of a partitioned whole (SaveSliceInfo, which TF1's Saver
reads) and what that Saver saves (SaveableObject), TF1's feature-column
classes and recurrent cells, the legacy TF1 layer base, whether a summary writer is the default, the resource tracker a
SavedModel's functions need, the SavedModel and VariableDef protos, a tf.data
pipeline's input, an ExponentialMovingAverage's averages; and, only while the
framework runs TF1 code (a call of model_fn, a TF1 hook, TF1's Saver over
partitioned variables), an eager variable's `op` (`var.op.name`, where
TensorFlow raises) and tensors compared by identity (tf.Tensor._USE_EQUALITY,
the switch behind tf.compat.v1.disable_tensor_equality). Every such name is
read here, through common.internals.versions: a TensorFlow that moves one
fails at this module's import, in one line naming the name and the version.
"""

import functools

import tensorflow as tf

from common.internals import versions
from common.internals.scoped_patches import ScopedPatch

_TENSORFLOW = "TensorFlow"


def _module(path):
    return versions.private_module(path, _TENSORFLOW)


def _name(owner, name):
    return versions.private(owner, name, _TENSORFLOW)


_VARIABLE_SCOPE = _module("tensorflow.python.ops.variable_scope")
VARSTORE_KEY = _name(_VARIABLE_SCOPE, "_VARSTORE_KEY")  # the graph collection holding get_variable's store
VARSCOPESTORE_KEY = _name(_VARIABLE_SCOPE, "_VARSCOPESTORE_KEY")  # ... and the scopes' counts
PartitionInfo = _name(_VARIABLE_SCOPE, "_PartitionInfo")  # what a partitioned initializer is given
_VARIABLES = _module("tensorflow.python.ops.variables")
PartitionedVariable = _name(_VARIABLES, "PartitionedVariable")
SaveSliceInfo = _name(_name(_VARIABLES, "Variable"), "SaveSliceInfo")
BaseResourceVariable = _name(_module("tensorflow.python.ops.resource_variable_ops"), "BaseResourceVariable")
feature_columns = _module("tensorflow.python.feature_column.feature_column_v2")  # TF1's column classes
_INTERNAL_COLUMNS = _name(_name(tf, "__internal__"), "feature_column")
DenseColumn = _name(_INTERNAL_COLUMNS, "DenseColumn")  # Keras 2's DenseFeatures took these
SequenceDenseColumn = _name(_INTERNAL_COLUMNS, "SequenceDenseColumn")
FeatureTransformationCache = _name(_INTERNAL_COLUMNS, "FeatureTransformationCache")
LazyBuilder = _name(_module("tensorflow.python.feature_column.feature_column"), "_LazyBuilder")  # TF1's input_layer's
has_default_writer = _name(_module("tensorflow.python.ops.summary_ops_v2"), "has_default_writer")
_RESOURCE = _module("tensorflow.python.trackable.resource")
ResourceTracker = _name(_RESOURCE, "ResourceTracker")
resource_tracker_scope = _name(_RESOURCE, "resource_tracker_scope")
SavedModel = _name(_module("tensorflow.core.protobuf.saved_model_pb2"), "SavedModel")
VariableDef = _name(_module("tensorflow.core.framework.variable_pb2"), "VariableDef")
_SAVEABLE = _module("tensorflow.python.training.saving.saveable_object")
SaveableObject = _name(_SAVEABLE, "SaveableObject")  # what TF1's Saver saves: a value under a name of one's own
SaveSpec = _name(_SAVEABLE, "SaveSpec")


@functools.lru_cache(maxsize=None)
def tf1_cells():
    """TensorFlow's module of TF1's recurrent cells (rnn_cell_impl), loaded when first asked for."""
    return _module("tensorflow.python.ops.rnn_cell_impl")


@functools.lru_cache(maxsize=None)
def tf1_layer_base():
    """(the TF1 layer base class, InputSpec) of TensorFlow's legacy Keras 2 copy, with BlockLSTM's gradient
    registered (contrib's fused LSTM builds on them); loaded when first asked for."""
    _module("tensorflow.python.ops.rnn_grad")  # (its import registers the gradient)
    return (_name(_module("tensorflow.python.keras.legacy_tf_layers.base"), "Layer"),
            _name(_module("tensorflow.python.keras.engine.input_spec"), "InputSpec"))


def save_slice_info(variable):
    """The SaveSliceInfo of a part of a partitioned variable, or None."""
    return getattr(variable, "_save_slice_info", None)


def set_save_slice_info(variable, info):
    """Records a part's SaveSliceInfo, where TF1's Saver reads it."""
    variable._save_slice_info = info


def input_dataset(dataset):
    """The dataset a tf.data transformation (with_options) reads, or None (tf.data offers no public walk)."""
    return getattr(dataset, "_input_dataset", None)


def averages_of(ema):
    """An ExponentialMovingAverage's {variable.ref(): its average} (what average(), average_name() read)."""
    return _name(ema, "_averages")


class VariableOp:
    """What TF1 code reads of a variable's op in its graph (`var.op.name`: slim's summaries, many TF1
    optimizers, name filters), for a variable model_fn's store made outside the function graph, whose eager
    handle has no op."""

    type = "VarHandleOp"

    def __init__(self, variable):
        self.name = variable.name.split(":")[0]
        self.device = variable.device
        self.outputs = [variable.handle]


_GRAPH_OP = BaseResourceVariable.op


def _op(variable):
    try:
        return _GRAPH_OP.fget(variable)
    except AttributeError:  # "Tensor.op is undefined when eager execution is enabled"
        return VariableOp(variable)


_VARIABLE_OP = ScopedPatch(BaseResourceVariable, "op", property(_op, doc=_GRAPH_OP.__doc__))


def variable_ops():
    """A context in which a variable made outside the function graph has the `op` TF1 code reads (VariableOp),
    where TensorFlow raises: entered while model_fn or a TF1 hook's method runs, and while TF1's Saver writes
    partitioned variables (it reads a slice's op.type); TensorFlow offers no other way than its class's
    property."""
    return _VARIABLE_OP.active()


_name(tf.Tensor, "_USE_EQUALITY")  # (checked: the switch exists)
_TENSORS_BY_IDENTITY = ScopedPatch(tf.Tensor, "_USE_EQUALITY", False)


def tensors_by_identity():
    """A context in which tensors and tf.Variables compare and hash by identity, as in TF1's graph (TF1 code keys
    dicts by variable and filters with `v not in [...]`): TensorFlow's switch behind
    tf.compat.v1.disable_tensor_equality, off for the context only."""
    return _TENSORS_BY_IDENTITY.active()
