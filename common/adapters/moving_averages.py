"""tf.train.ExponentialMovingAverage in model_fn: its averages follow the optimizer's update, once a step.

TF1 programs (the official TPU models: ResNet, MobileNet, EfficientNet)
averaged their weights after each step:

    with tf.control_dependencies([train_op]):
        train_op = ema.apply(tf.trainable_variables())

so each shadow ("<variable>/ExponentialMovingAverage") moved towards the
updated weights, with the global step already counted (`num_updates`). Here a
train tower's call does not update: the framework applies the averaged
gradients after every tower. So `apply`, called in a train tower, is
recorded (CallRecord.after_update) and done by the framework once per step,
after the update and the step's count (common.engine.model_builder); called
anywhere else it is TensorFlow's own. Each average is named after its
variable's TF1 name (a Keras layer's variable's: its Keras path, as Keras 3
does not make its tf.Variables' names unique), which `average_name` answers
in model_fn, and `variables_to_restore` takes Keras variables. TensorFlow
offers no hook: these three methods of TensorFlow's class (tf.train and
tf.compat.v1.train name the same class) are replaced while a model_fn call or
a TF1 hook's method runs (`in_model_fn`), so a program gets them unchanged,
upgraded or not; outside those, the class is TensorFlow's.
"""

import contextlib
import functools

import tensorflow as tf

from common.internals import tensorflow_internals
from common.internals.scoped_patches import ScopedPatch, all_active
from common.variables import registry

_EMA = tf.compat.v1.train.ExponentialMovingAverage  # (TensorFlow's class, which tf.train names too)
_TENSORFLOW_APPLY = _EMA.apply


@functools.wraps(_TENSORFLOW_APPLY)
def _apply(self, var_list=None):
    if not registry.deferring_updates():
        return _TENSORFLOW_APPLY(self, var_list)
    if var_list is None:  # (TF1: the graph's trainable variables when apply is called)
        var_list = tf.compat.v1.trainable_variables()
    variables = [registry.tf_variable(v) for v in var_list]  # (a Keras layer's: the tf.Variable it holds)
    registry.active_registry().call.after_update.append(functools.partial(_averaged, self, variables))
    return tf.no_op(name=self.name)


def _averaged(ema, variables):
    """TensorFlow's apply, each average made first under its variable's TF1 name ("<name>/<ema.name>": a Keras
    layer's variable's is its Keras path, where TensorFlow would name it after the tf.Variable's own, which
    Keras 3 does not make unique)."""
    active = registry.active_registry()
    for variable in variables:
        if variable.ref() not in tensorflow_internals.averages_of(ema):
            name = f"{active.name_of(variable) or variable.name.split(':')[0]}/{ema.name}"
            with tf.init_scope():
                tensorflow_internals.averages_of(ema)[variable.ref()] = tf.compat.v1.get_variable(
                    name, initializer=variable.read_value(), trainable=False)
            tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.MOVING_AVERAGE_VARIABLES, variable)
    return _TENSORFLOW_APPLY(ema, variables)


@functools.wraps(_EMA.average_name)
def _average_name(self, var):
    """In model_fn, "<the variable's name here>/<ema.name>", as _averaged names it."""
    var = registry.tf_variable(var)
    name = registry.active_registry().name_of(var) if registry.running_model_fn() else None
    if name is None or var.ref() in tensorflow_internals.averages_of(self):
        return _TENSORFLOW_AVERAGE_NAME(self, var)
    return f"{name}/{self.name}"


@functools.wraps(_EMA.variables_to_restore)
def _variables_to_restore(self, moving_avg_variables=None):
    """TensorFlow's, a Keras layer's variable read as the tf.Variable it holds (which TensorFlow's can key)."""
    if moving_avg_variables is not None:
        moving_avg_variables = [registry.tf_variable(v) for v in moving_avg_variables]
    return _TENSORFLOW_VARIABLES_TO_RESTORE(self, moving_avg_variables)


_TENSORFLOW_AVERAGE_NAME = _EMA.average_name
_TENSORFLOW_VARIABLES_TO_RESTORE = _EMA.variables_to_restore
_PATCHES = [ScopedPatch(_EMA, name, replacement) for name, replacement in (
    ("apply", _apply), ("average_name", _average_name), ("variables_to_restore", _variables_to_restore))]


@contextlib.contextmanager
def in_model_fn():
    """While entered (a model_fn call, a TF1 hook's method), ExponentialMovingAverage's apply, average_name and
    variables_to_restore are this module's (see the module)."""
    with all_active(_PATCHES):
        yield
