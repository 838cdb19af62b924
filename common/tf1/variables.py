"""tf.compat.v1.trainable_variables() inside model_fn.

TF1 programs summed a weight decay over the graph's trainable-variables
collection (the official CIFAR-10 example did); in TF2 that collection is
empty inside a tf.function, so the decay would silently be zero. Here the
model's variables stand in for the collection.
"""

from common.variables import registry


def trainable_variables(scope=None):
    """The trainable variables model_fn has made so far (every one, after its
    first call), as the Keras variables layers read, so a loss built from them
    is differentiated on every tower."""
    if scope is not None:
        raise ValueError(
            f"trainable_variables(scope={scope!r}): variable scopes do not name variables here; filter the list "
            "by v.path (\"model_fn/<layer>/kernel\" for a layer model_fn built, its Keras path for a module's)")
    return registry.active_registry().trainable_variables()
