"""tf.compat.v1.losses' regularization losses inside model_fn.

A TF1 layer given kernel_regularizer=... put its loss in the graph's
REGULARIZATION_LOSSES collection, and model_fn added
`tf.compat.v1.losses.get_regularization_loss()` to its loss. TF2 has no
collection inside a tf.function: that sum would silently be zero. Here the
losses of the common.tf1.layers the running model_fn call built stand in
for it. The other tf.compat.v1.losses functions work as they are.
"""

import tensorflow as tf

from common.variables import registry


def get_regularization_losses(scope=None):
    """The regularization losses of the TF1 layers this model_fn call built, in order."""
    _refuse_scope(scope, "get_regularization_losses")
    return list(registry.active_registry().regularization_losses)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """Their sum (0.0 when there are none), as TF1 gave it."""
    _refuse_scope(scope, "get_regularization_loss")
    losses = registry.active_registry().regularization_losses
    return tf.add_n(losses, name=name) if losses else tf.constant(0.0)


def _refuse_scope(scope, function):
    if scope is not None:
        raise ValueError(f"{function}(scope={scope!r}): variable scopes do not name variables here; give the "
                         "regularizer only to the layers whose weights it should hold")
