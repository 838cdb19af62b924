"""Keras optimizers that update exactly as TF1's did where Keras differs.

TF1's MomentumOptimizer accumulates the raw gradient and scales the
accumulator by the current learning rate (accum = m*accum + g; w -= lr*accum);
Keras's SGD accumulates lr*g. The two agree while the rate is constant and
part after a drop: the accumulated velocity keeps the old rate under Keras
and takes the new one under TF1. TF1's RMSProp starts its mean square at 1
and adds epsilon inside the root (Keras starts at 0).
"""

import keras
from keras import ops


class MomentumTF1(keras.optimizers.Optimizer):
    """tf.compat.v1.train.MomentumOptimizer's update rule."""

    def __init__(self, learning_rate=0.01, momentum=0.9, use_nesterov=False, name="MomentumTF1", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.momentum = momentum
        self.use_nesterov = use_nesterov

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.accumulators = [self.add_variable_from_reference(v, "momentum") for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        learning_rate = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        momentum = ops.cast(self.momentum, variable.dtype)
        accumulator = self.accumulators[self._get_variable_index(variable)]
        self.assign(accumulator, ops.add(ops.multiply(accumulator, momentum), gradient))
        step = ops.add(gradient, ops.multiply(accumulator, momentum)) if self.use_nesterov else accumulator
        self.assign_sub(variable, ops.multiply(step, learning_rate))

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "use_nesterov": self.use_nesterov}


class RMSPropTF1(keras.optimizers.Optimizer):
    """tf.compat.v1.train.RMSPropOptimizer's update rule (mean square starts at 1)."""

    def __init__(self, learning_rate=0.001, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False,
                 name="RMSPropTF1", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.decay, self.momentum, self.epsilon, self.centered = decay, momentum, epsilon, centered

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.mean_squares = [self.add_variable_from_reference(v, "rms", initializer="ones") for v in variables]
        self.moments = [self.add_variable_from_reference(v, "momentum") for v in variables]
        self.mean_gradients = ([self.add_variable_from_reference(v, "mg") for v in variables]
                               if self.centered else [])

    def update_step(self, gradient, variable, learning_rate):
        learning_rate = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        index = self._get_variable_index(variable)
        decay = ops.cast(self.decay, variable.dtype)
        mean_square = self.mean_squares[index]
        self.assign(mean_square, ops.add(ops.multiply(mean_square, decay),
                                         ops.multiply(ops.square(gradient), 1 - decay)))
        denominator = ops.add(mean_square, self.epsilon)
        if self.centered:
            mean_gradient = self.mean_gradients[index]
            self.assign(mean_gradient, ops.add(ops.multiply(mean_gradient, decay), ops.multiply(gradient, 1 - decay)))
            denominator = ops.subtract(denominator, ops.square(mean_gradient))
        moment = self.moments[index]
        self.assign(moment, ops.add(ops.multiply(moment, ops.cast(self.momentum, variable.dtype)),
                                    ops.divide(ops.multiply(gradient, learning_rate), ops.sqrt(denominator))))
        self.assign_sub(variable, moment)

    def get_config(self):
        return {**super().get_config(), "decay": self.decay, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}
