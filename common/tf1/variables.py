"""tf.compat.v1.trainable_variables() inside model_fn, as programs upgraded here call it.

TF1 programs summed a weight decay over the graph's trainable variables (the
official CIFAR-10 example did). Each call of model_fn has a fresh TF1 graph's
collections (common.tf1_runtime.tf1_graph), so TensorFlow's own function lists
them too; this one lists the variables as layers and optimizers know them
(a Keras layer's as its Keras variable), which an XLA-compiled tower reads
from its own device.
"""

import re

from common.variables import registry


def trainable_variables(scope=None):
    """The trainable variables model_fn has made so far (every one, after its
    first call), those whose TF1 name `scope` matches (re.match) when given."""
    active = registry.active_registry()
    variables = active.trainable_variables()
    if scope is None:
        return variables
    return [v for v in variables if re.match(scope, active.name_of(v) or v.name)]
