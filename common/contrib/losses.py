"""tf.contrib.losses (TF 1.0's, which tf.losses replaced in 1.1): contrib's argument order, TF1's numbers.

contrib's losses took the predictions (or logits) first and the labels
second, where tf.compat.v1.losses takes the labels first; each reduced as
tf.compat.v1.losses does by default (the weighted sum over the number of
non-zero weights), but hinge_loss, which gave each example's loss.
"""

import tensorflow as tf

_V1 = tf.compat.v1.losses
add_loss = _V1.add_loss
get_losses = _V1.get_losses
get_regularization_losses = _V1.get_regularization_losses
get_total_loss = _V1.get_total_loss
compute_weighted_loss = _V1.compute_weighted_loss


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    return _V1.absolute_difference(labels, predictions, weights, scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _V1.mean_squared_error(labels, predictions, weights, scope)


def mean_pairwise_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _V1.mean_pairwise_squared_error(labels, predictions, weights, scope)


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    return _V1.log_loss(labels, predictions, weights, epsilon, scope)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    return _V1.cosine_distance(labels, predictions, axis=axis if axis is not None else dim, weights=weights,
                               scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    """Each example's hinge loss (contrib's was not reduced)."""
    return _V1.hinge_loss(labels, logits, scope=scope, reduction=_V1.Reduction.NONE)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0, scope=None):
    return _V1.sigmoid_cross_entropy(multi_class_labels, logits, weights, label_smoothing, scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    return _V1.softmax_cross_entropy(onehot_labels, logits, weights, label_smoothing, scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    return _V1.sparse_softmax_cross_entropy(labels, logits, weights, scope)
