"""A premade estimator's `optimizer` argument: a name, an instance or a callable, as tf.estimator took it.

A name ("Adagrad", "Adam", "Ftrl", "RMSProp", "SGD") gets TF1's optimizer of
that name at the estimator's default learning rate (Adagrad 0.05 for a DNN,
Ftrl at min(0.2, 1/sqrt(columns)) for a linear model), as tf.estimator's
canned estimators made it. A TF1 optimizer instance (tf.compat.v1.train.*,
upgraded to common.tf1.train.*) is used as given. A Keras optimizer instance
was made before model_fn ran, so its variables are outside the model (no
checkpoint or tower average knows them), so each model_fn call makes a copy
from its config (this project's choice: tf.estimator 2.15 took only Keras's
legacy optimizers, which made their variables in its graph). The copy has
the config's settings only, and its name is the class's, so its state is
checkpointed alike in every process. A callable is called with no
arguments, inside model_fn, for one of those.
"""

import keras
import tensorflow as tf

from common.tf1 import train as tf1_train
from common.tf1_runtime import optimizer as tf1_optimizer

_BY_NAME = {"Adagrad": tf1_train.AdagradOptimizer, "Adam": tf1_train.AdamOptimizer,
            "Ftrl": tf1_train.FtrlOptimizer, "RMSProp": tf1_train.RMSPropOptimizer,
            "SGD": tf1_train.GradientDescentOptimizer}


def optimizer_instance(optimizer, learning_rate):
    """The optimizer `optimizer` stands for; learning_rate is the default a name gets."""
    if isinstance(optimizer, str):
        if optimizer not in _BY_NAME:
            raise ValueError(f"optimizer {optimizer!r} is not one of {sorted(_BY_NAME)}; give one of those names, "
                             "an optimizer instance or a callable returning one")
        return _BY_NAME[optimizer](learning_rate=learning_rate)
    if isinstance(optimizer, keras.optimizers.Optimizer):
        return _copy_from_config(optimizer)
    if callable(optimizer) and not isinstance(optimizer, tf1_optimizer.Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, (tf1_optimizer.Optimizer, keras.optimizers.Optimizer)):
        raise ValueError(f"optimizer must be a name, a tf.compat.v1.train or Keras optimizer, or a callable "
                         f"returning one; got {type(optimizer).__name__}")
    return optimizer


def _copy_from_config(optimizer):
    """A new Keras optimizer configured as `optimizer`, its variables made here (in model_fn)."""
    try:
        with tf.init_scope():  # (the config reads the learning rate's value)
            config = optimizer.get_config()
        config.pop("name", None)  # (Keras numbers names per process: adam, adam_1, ...)
        return type(optimizer).from_config(config)
    except Exception as error:  # (a user's optimizer may fail in any way; the message says what to do)
        raise ValueError(f"the Keras optimizer {type(optimizer).__name__} given to a premade estimator is remade in "
                         f"model_fn from its config, which failed ({error}); give a callable returning a new one "
                         "instead") from error


def minimize(optimizer, loss, var_list):
    """The train op updating var_list to lower loss (the framework applies it once, with the towers' average)."""
    var_list = list(var_list)
    if not var_list:
        raise ValueError("the model has no trainable variables to optimize")
    if isinstance(optimizer, tf1_optimizer.Optimizer):
        return optimizer.minimize(loss, var_list=var_list)
    gradients = tf.gradients(loss, var_list)
    if all(g is None for g in gradients):
        raise ValueError(f"No gradients provided for any variable: the loss depends on none of "
                         f"{[v.name for v in var_list]}")
    return optimizer.apply_gradients([(g, v) for g, v in zip(gradients, var_list) if g is not None])
