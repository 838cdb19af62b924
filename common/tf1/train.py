"""tf.compat.v1.train inside model_fn: optimizers whose minimize() is the train_op.

A TF1 estimator program made its optimizer in model_fn and returned
`optimizer.minimize(loss, global_step)` as the spec's train_op. Here the
towers need the loss and one optimizer, not an update op: `minimize`
returns a `TrainOp` naming them, the framework computes each tower's
gradients, averages them on each variable's device and applies them with
the TF1 update rule. The Keras optimizer behind is made once (the first
call's), whatever object model_fn makes on later calls; a learning rate
given as a tensor (a schedule of the global step) is written into it
before each update.
"""

import numbers

import keras

from common.spec.model_fn import TrainOp
from common.tf1 import update_rules
from common.variables import registry

get_global_step = registry.get_global_step
get_or_create_global_step = registry.get_global_step


class Optimizer:
    """What the TF1 optimizers share: the learning rate and minimize()."""

    def __init__(self, learning_rate, use_locking=False, name=None):
        del use_locking, name  # the update is one op per variable; the name is the class's
        self._learning_rate = learning_rate
        self.clip_norm = None  # the global norm the averaged gradients are clipped to (common.clip_gradients_by_norm)

    def _make(self, learning_rate):
        """The Keras optimizer with this TF1 rule, at a float learning rate."""
        raise NotImplementedError

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """A TrainOp: differentiate `loss`, update every trainable variable, count the step.

        global_step: accepted for TF1's signature; the framework counts every step.
        """
        del global_step, gate_gradients, aggregation_method, colocate_gradients_with_ops, name
        if var_list is not None:
            raise NotImplementedError(
                "minimize(var_list=...): every trainable variable is trained here; hold some fixed with "
                "Estimator(..., frozen_variables=REGEX) or build them with trainable=False")
        if grad_loss is not None:
            raise NotImplementedError("minimize(grad_loss=...) is not supported: differentiate the loss itself")
        rate = self._learning_rate() if callable(self._learning_rate) else self._learning_rate
        constant = isinstance(rate, numbers.Real)
        optimizer = registry.get_optimizer(lambda: self._keras_optimizer(float(rate) if constant else 0.0))
        return TrainOp(loss=loss, optimizer=optimizer, learning_rate=None if constant else rate)

    def _keras_optimizer(self, learning_rate):
        optimizer = self._make(learning_rate)
        if self.clip_norm is not None:
            optimizer.global_clipnorm = self.clip_norm
        return optimizer

    def compute_gradients(self, *args, **kwargs):
        raise NotImplementedError(
            "compute_gradients/apply_gradients inside model_fn: return optimizer.minimize(loss) as the "
            "train_op; the framework computes each tower's gradients and averages them")

    apply_gradients = compute_gradients


class GradientDescentOptimizer(Optimizer):
    def _make(self, learning_rate):
        return keras.optimizers.SGD(learning_rate)


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(learning_rate, use_locking, name)
        self._momentum, self._nesterov = momentum, use_nesterov

    def _make(self, learning_rate):
        return update_rules.MomentumTF1(learning_rate, self._momentum, self._nesterov)


class AdamOptimizer(Optimizer):
    """Keras's Adam is TF1's update (epsilon outside the root, bias-corrected
    rate); only epsilon's default differs (1e-7 there, 1e-8 here, as TF1)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name="Adam"):
        super().__init__(learning_rate, use_locking, name)
        self._betas, self._epsilon = (beta1, beta2), epsilon

    def _make(self, learning_rate):
        return keras.optimizers.Adam(learning_rate, *self._betas, epsilon=self._epsilon)


class AdagradOptimizer(Optimizer):
    """TF1's Adagrad has no epsilon: Keras's with epsilon 0."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        super().__init__(learning_rate, use_locking, name)
        self._initial = initial_accumulator_value

    def _make(self, learning_rate):
        return keras.optimizers.Adagrad(learning_rate, initial_accumulator_value=self._initial, epsilon=0.0)


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(learning_rate, use_locking, name)
        self._settings = dict(decay=decay, momentum=momentum, epsilon=epsilon, centered=centered)

    def _make(self, learning_rate):
        return update_rules.RMSPropTF1(learning_rate, **self._settings)
