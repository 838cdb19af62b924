"""tf.contrib.slim inside model_fn: the tf_slim package, mended where TensorFlow 2.21 broke it.

tf.contrib.slim left TensorFlow with 2.0 as the separate `tf_slim` package
(`pip install tf-slim`, an extra this project does not require). The
upgrade maps `tf.contrib.slim` here; every name is tf_slim's, so
arg_scope, the layers, the losses, learning and nets name their variables
as TF1's slim did ("resnet_v1_50/conv1/weights"). Importing this module
mends what fails on TensorFlow 2.21:

- slim.batch_norm builds tensorflow.python.layers.normalization's
  BatchNormalization, which TensorFlow now loads from tf_keras (not
  installed here, and Keras 3 has no TF1 layers): it gets common.tf1.layers'
  batch norm, whose moving averages the framework applies after each step
  (the op filed under UPDATE_OPS stands for that);
- tf_slim reads names TensorFlow has moved out of its internal modules
  (ops.Tensor and ops.IndexedSlices: slim.batch_norm's fused path,
  create_train_op(summarize_gradients=True); control_flow_ops.cond, ...):
  each tf_slim module reads those modules with the names put back (MOVED);
- slim.assign_from_checkpoint_fn builds a tf.compat.v1.train.Saver, whose
  restore, traced into the step, would run at every step: in model_fn it is
  common.tf1.train.init_from_checkpoint (the variables start from the
  checkpoint when the model starts new, as the Scaffold's init_fn ran), and
  the function it returns does nothing.
"""

import importlib
import sys
import types

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.tf1 import layers as tf1_layers
from common.tf1 import train as tf1_train
from common.tf1_runtime.tf1_graph import variable_name
from common.variables import registry

try:
    import tf_slim
except ImportError as error:  # (tf_slim's own failed imports, too: said with the cause)
    raise ImportError("tf.contrib.slim is the tf_slim package since TensorFlow 2.0, which this project does not "
                      f"install: pip install tf-slim ({error})") from error


class BatchNormalization(tf1_layers.BatchNormalization):
    """TF1's normalization layer as slim.batch_norm builds it: its arguments, and `apply`."""

    def __init__(self, *args, fused=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                 adjustment=None, **kwargs):
        del fused, renorm_momentum  # (the fused kernel is used where it can be)
        super().__init__(*args, renorm=renorm, renorm_clipping=renorm_clipping, adjustment=adjustment, **kwargs)

    def apply(self, inputs, *args, **kwargs):
        return self(inputs, *args, **kwargs)


# What tf_slim reads from TensorFlow's internal modules that TensorFlow 2.21 moved out of them.
MOVED = {"tensorflow.python.framework.ops": {"Tensor": tf.Tensor, "IndexedSlices": tf.IndexedSlices},
         "tensorflow.python.ops.array_ops": {"stack": tf.stack, "unstack": tf.unstack},
         "tensorflow.python.ops.control_flow_ops": {"Assert": tf.debugging.Assert, "case": tf.compat.v1.case,
                                                    "cond": tf.compat.v1.cond, "while_loop": tf.compat.v1.while_loop},
         "tensorflow.python.ops.variable_scope": {"variable": tf.compat.v1.Variable}}


class _Mended(types.ModuleType):
    """One of TensorFlow's internal modules as tf_slim reads it: the module, with the names MOVED says."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self.__dict__.update(MOVED[module.__name__])
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False, reshape_variables=False):
    """slim's, in model_fn as init_from_checkpoint (see the module); outside model_fn, tf_slim's. The global
    step is left to the framework, which counts the steps."""
    if not registry.running_model_fn():
        return _TF_SLIM_ASSIGN_FN(model_path, var_list, ignore_missing_vars, reshape_variables)
    if reshape_variables:
        raise NotImplementedError("slim.assign_from_checkpoint_fn(reshape_variables=True) is not supported in model_fn")
    pairs = dict(var_list) if isinstance(var_list, dict) else {variable_name(v): v for v in var_list}
    pairs = {name: v for name, v in pairs.items() if variable_name(v) != "global_step"}
    if ignore_missing_vars:
        reader = tf.train.load_checkpoint(model_path)
        for name in [name for name in pairs if not reader.has_tensor(name)]:
            logging.warning("Variable %s missing in checkpoint %s", name, model_path)
            del pairs[name]
    if pairs:
        tf1_train.init_from_checkpoint(model_path, pairs)
    return lambda session: None


def _mend():
    """Every loaded tf_slim module reads the mended modules; slim.batch_norm builds the batch norm above."""
    for name, module in list(sys.modules.items()):
        if name.startswith("tf_slim.") and module is not None:
            for attribute, value in list(vars(module).items()):
                if isinstance(value, types.ModuleType) and not isinstance(value, _Mended) and value.__name__ in MOVED:
                    setattr(module, attribute, _Mended(value))
    layers = importlib.import_module("tf_slim.layers.layers")  # (tf_slim.layers rebinds `layers`)
    layers.normalization_layers = types.SimpleNamespace(BatchNormalization=BatchNormalization)
    for module in (tf_slim, _VARIABLES):  # (a program's own `import tf_slim` reaches it too)
        module.assign_from_checkpoint_fn = assign_from_checkpoint_fn


_VARIABLES = importlib.import_module("tf_slim.ops.variables")
_TF_SLIM_ASSIGN_FN = getattr(_VARIABLES.assign_from_checkpoint_fn, "tf_slims", _VARIABLES.assign_from_checkpoint_fn)
assign_from_checkpoint_fn.tf_slims = _TF_SLIM_ASSIGN_FN  # (a second import of this module mends no twice)


_mend()


def __getattr__(name):
    """tf_slim's names; `nets` (which `import tf_slim` does not load) too. (Not its dunders: with tf_slim's
    __path__ this module would pass for a package, and import tf_slim's modules again under its name.)"""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "nets":
        nets = importlib.import_module("tf_slim.nets")
        _mend()
        globals()["nets"] = nets
        return nets
    return getattr(tf_slim, name)
