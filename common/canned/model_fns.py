"""The model_fn every premade estimator runs: its networks' logits summed, its head, one optimizer a network.

A `Network` names what one part of a model contributes: a function of
(features, mode, logits dimension) giving (logits, trainable variables),
and the optimizer (name, instance or callable) with its default learning
rate. DNN, linear and baseline estimators have one; wide-and-deep has two,
each trained by its own optimizer, their logits added.
"""

import dataclasses
from typing import Any, Callable

import tensorflow as tf

from common.canned import optimizers
from common.spec.model_fn import ModeKeys


@dataclasses.dataclass(frozen=True)
class Network:
    """logits_fn(features, mode, units) -> (logits, trainable variables); optimizer and its default rate."""

    logits_fn: Callable
    optimizer: Any
    default_learning_rate: float


def model_fn_of(head, networks):
    """A model_fn(features, labels, mode) for `head` over the sum of `networks`' logits."""
    networks = [n for n in networks if n is not None]
    if not networks:
        raise ValueError("a premade estimator needs feature columns for at least one of its networks")

    def model_fn(features, labels, mode):
        parts = [network.logits_fn(features, mode, head.logits_dimension) for network in networks]
        logits = tf.add_n([logits for logits, _ in parts]) if len(parts) > 1 else parts[0][0]
        regularization = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES)

        def train_op_fn(loss):
            updates = [optimizers.minimize(optimizers.optimizer_instance(network.optimizer,
                                                                          network.default_learning_rate),
                                           loss, variables)
                       for network, (_, variables) in zip(networks, parts)]
            return updates[0] if len(updates) == 1 else tf.group(*updates)

        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS) if mode == ModeKeys.TRAIN \
            else None
        return head.create_estimator_spec(features, mode, logits, labels=labels,
                                          train_op_fn=train_op_fn if mode == ModeKeys.TRAIN else None,
                                          update_ops=update_ops, regularization_losses=regularization or None)
    return model_fn
