"""Where each model variable lives: the TF2 form of the old device setter.

A `tf.variable_creator_scope` sees every variable as it is created, Keras
layers' included, so it can put each one on a device. Variables arrive one
at a time, so the GPU strategy is the online greedy rule of the old
`GreedyLoadBalancingStrategy`: each variable goes to the device with the
fewest bytes so far. Its bound: no device holds more than
total/num_devices + the largest variable. (Largest-first over the whole list
would need every shape before any variable exists, i.e. building the model
twice.) Optimizer slots are not placed here: Keras creates each slot
colocated with its variable.
"""

import contextlib

import numpy as np
import tensorflow as tf


class GreedyLoadBalancer:
    """Assigns each variable to the least-loaded device, counted in bytes."""

    def __init__(self, devices):
        self.devices = tuple(devices)
        self.loads = [0] * len(self.devices)
        self.assignments = []  # (name, bytes, device), in creation order

    def assign(self, name, num_bytes):
        index = int(np.argmin(self.loads))
        self.loads[index] += num_bytes
        device = self.devices[index]
        self.assignments.append((name, num_bytes, device))
        return device


def requested_shape_and_dtype(kwargs):
    """The shape and dtype of the variable tf.Variable(**kwargs) would make.

    A creator sees only an initial value, often a callable; it is evaluated
    eagerly here when only it knows the shape. Keras initializers are
    stateless (fixed integer seeds), so evaluating one twice gives the same
    values.
    """
    shape, dtype = kwargs.get("shape"), kwargs.get("dtype")
    if shape is None or not tf.TensorShape(shape).is_fully_defined():
        initial_value = kwargs.get("initial_value")
        with tf.init_scope():
            value = tf.convert_to_tensor(initial_value() if callable(initial_value) else initial_value,
                                         dtype_hint=dtype)
        shape, dtype = value.shape, dtype or value.dtype
    return tf.TensorShape(shape), tf.as_dtype(dtype)


@contextlib.contextmanager
def outside_the_trace(kwargs):
    """Yields variable-creator kwargs that make the variable outside the tf.function being traced (tf.init_scope)
    and not lifted by it, where its initial value allows (a callable or a value, not a tensor of the trace): a
    tf.function whose trace lifts a variable it made traces itself again, and a probe's trace of model_fn is the
    costliest part of start-up."""
    if tf.is_symbolic_tensor(kwargs.get("initial_value")):
        yield kwargs
        return
    with tf.init_scope():
        yield dict(kwargs, experimental_enable_variable_lifting=False)


def _byte_size(kwargs):
    shape, dtype = requested_shape_and_dtype(kwargs)
    return int(np.prod(shape.as_list())) * dtype.size


def placing_creator(devices, balancer=None):
    """A variable creator that puts every variable on one of `devices`.

    One device: all variables go there (the CPU strategy). Several: greedy
    by byte size through `balancer` (a GreedyLoadBalancer, made here when
    not given; pass your own to inspect the assignments).
    """
    devices = tuple(devices)
    if len(devices) > 1 and balancer is None:
        balancer = GreedyLoadBalancer(devices)

    @tf.autograph.experimental.do_not_convert
    def creator(next_creator, **kwargs):
        if len(devices) == 1:
            with tf.device(devices[0]):
                return next_creator(**kwargs)
        with tf.device(balancer.assign(kwargs.get("name"), _byte_size(kwargs))):
            return next_creator(**kwargs)

    return creator
