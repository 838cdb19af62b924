"""tf.compat.v1.losses' regularization losses inside model_fn.

Each call of model_fn has a fresh TF1 graph's collections
(common.tf1_runtime.tf1_graph), and TF1 layers file their weights'
regularization losses in REGULARIZATION_LOSSES, so TensorFlow's own
functions sum the call's losses; they are here under the names programs
upgraded by earlier versions of `python -m common.upgrade` import.
"""

import tensorflow as tf

get_regularization_losses = tf.compat.v1.losses.get_regularization_losses
get_regularization_loss = tf.compat.v1.losses.get_regularization_loss
