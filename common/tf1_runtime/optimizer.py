"""tf.compat.v1.train.Optimizer inside model_fn, on towers: the base of TF1's optimizers and of users' own.

A TF1 program returned `optimizer.minimize(loss)`, or `apply_gradients` of
gradients it computed itself (tf.gradients, clipped by global norm), as the
spec's train_op. Here model_fn runs once per tower. In a train tower,
apply_gradients (this class's, or a subclass's override: BERT's
AdamWeightDecayOptimizer makes its slots with get_variable and assigns its
variables itself) hands its (gradient, variable) pairs to the framework
(the running call's defer_update: common.tf1_runtime.caller) and returns an
op standing for the update; the framework averages each variable's gradients over the towers on
the variable's device, and calls the same apply_gradients once, on the
first tower's optimizer, with the averages. Outside a train tower it runs
as written.

The apply of this class is TF1's: slots are variables named as TF1 named
them ("dense/kernel/Adam", "dense/kernel/Adam_1", "beta1_power"), made on
their variable's device through the TF1 variable store (so they are served
to every later step and checkpointed under those names), updated by TF1's
fused kernels (tf.raw_ops.ResourceApplyAdam, ...). A subclass may override
TF1's hooks: _create_slots, _prepare, _resource_apply_dense (its default
calls _apply_dense), _resource_apply_sparse (default: _apply_sparse), _finish.
"""

import contextlib
import functools

import keras
import tensorflow as tf

from common.internals import keras_internals
from common.tf1_runtime import caller, partitioned, tf1_graph
from common.tf1_runtime.tf1_graph import variable_name


def _deferring(apply_gradients):
    """apply_gradients, recorded instead of done in a train tower (see the module)."""
    @functools.wraps(apply_gradients)
    def deferring(self, grads_and_vars, global_step=None, name=None):
        pairs = list(grads_and_vars)
        if self._call_store is None:  # (an optimizer made outside model_fn: the call that first applies it)
            self._call_store = tf1_graph.active_store()
        if self._call_store is not None and self._apply_scope is None:  # (TF1 named its non-slot state there)
            self._apply_scope = self._call_store.scope_here()
        running = caller.current()
        if running is not None and running.deferring:
            return running.defer_update(self, pairs, lambda averaged: apply_gradients(
                self, self.clipped(averaged), global_step=global_step, name=name))
        return apply_gradients(self, pairs, global_step=global_step, name=name)
    return deferring


class Optimizer:
    """TF1's Optimizer API (see the module)."""

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {variable name: slot variable}
        self._non_slots = {}  # name -> variable
        self._call_store = tf1_graph.active_store()  # (the model_fn call that made it: its non-slot names' scope)
        self._apply_scope = None  # the name scope model_fn called apply_gradients (minimize) in
        self._slot_names = set()  # the TF1 names given to slots so far (made unique as TF1's graph made them)
        self.clip_norm = None  # the global norm the averaged gradients are clipped to (common.clip_gradients_by_norm)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "apply_gradients" in cls.__dict__:
            cls.apply_gradients = _deferring(cls.__dict__["apply_gradients"])

    def get_name(self):
        return self._name

    # ------------------------------------------------------------------ TF1's API
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError(
                f"No gradients provided for any variable, check your graph for ops that do not support gradients, "
                f"between variables {[variable_name(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """[(gradient, variable)] of the loss (a tensor, or a callable as TF1 took in eager mode) with respect
        to var_list, by default the graph's trainable variables (every model variable model_fn made)."""
        del gate_gradients, colocate_gradients_with_ops
        if var_list is None:
            var_list = tf.compat.v1.trainable_variables() + tf.compat.v1.get_collection(
                tf.compat.v1.GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        var_list = list({id(v): v for v in var_list}.values())
        if not var_list:
            raise ValueError("No variables to optimize.")
        if callable(loss):
            with tf.GradientTape() as tape:
                loss = loss()
            return list(zip(tape.gradient(loss, var_list, output_gradients=grad_loss), var_list))
        grads = tf.gradients(loss, var_list, grad_ys=grad_loss, aggregation_method=aggregation_method)
        return list(zip(grads, var_list))

    @_deferring
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """TF1's apply: slots made, _prepare, one update per variable, _finish. global_step is not counted
        here: the framework counts every step."""
        del global_step
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            names = [variable_name(v) for _, v in grads_and_vars]
            raise ValueError(f"No gradients provided for any variable: {names}.")
        variables = [tf1_graph.tf_variable(v) for _, v in pairs]
        self._create_slots(variables)
        self._prepare()
        updates = []
        for (grad, _), variable in zip(pairs, variables):
            with tf.device(variable.device):
                if isinstance(grad, tf.IndexedSlices):
                    updates.append(self._resource_apply_sparse_duplicate_indices(grad.values, variable, grad.indices))
                else:
                    updates.append(self._resource_apply_dense(tf.convert_to_tensor(grad), variable))
        return self._finish(updates, name or self._name)

    def clipped(self, grads_and_vars):
        """The pairs with the gradients clipped to clip_norm by their global norm, when it is set."""
        pairs = list(grads_and_vars)
        if self.clip_norm is None:
            return pairs
        present = [i for i, (g, _) in enumerate(pairs) if g is not None]
        clipped, _ = tf.clip_by_global_norm([pairs[i][0] for i in present], self.clip_norm)
        for position, index in enumerate(present):
            pairs[index] = (clipped[position], pairs[index][1])
        return pairs

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(variable_name(var))

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        return [v for slots in self._slots.values() for v in slots.values()] + list(self._non_slots.values())

    # ------------------------------------------------------- hooks for subclasses
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} defines no update: override _apply_dense, "
                                  "_resource_apply_dense or apply_gradients")

    def _apply_sparse(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} defines no sparse update (_apply_sparse)")

    def _resource_apply_dense(self, grad, handle):
        return self._apply_dense(grad, handle)

    def _resource_apply_sparse(self, grad, handle, indices):
        return self._apply_sparse(tf.IndexedSlices(grad, indices, tf.shape(handle, out_type=indices.dtype)),
                                  handle)

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        unique, positions = tf.unique(indices)
        summed = tf.math.unsorted_segment_sum(grad, positions, tf.shape(unique)[0])
        return self._resource_apply_sparse(summed, handle, unique)

    def _finish(self, update_ops, name_scope):
        return tf.group(*update_ops, name=name_scope)

    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param

    # ----------------------------------------------------------------- slots
    def _slot_name(self, var, op_name):
        """TF1's slot name: "<variable>/<op name>", "_1", "_2" added when the graph already had it."""
        base = f"{variable_name(var)}/{op_name}"
        name, count = base, 0
        while name in self._slot_names:
            count += 1
            name = f"{base}_{count}"
        self._slot_names.add(name)
        return name

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        named = self._slots.setdefault(slot_name, {})
        key = variable_name(var)
        if key not in named:
            name = self._slot_name(var, op_name)
            shape = tf.TensorShape(shape).as_list()
            with tf1_graph.creating_variable(name, optimizer_state=True, device=var.device), _colocated(var):
                named[key] = tf.Variable(lambda: initializer(shape, dtype=dtype), name=name, trainable=False,
                                         dtype=dtype)
            partitioned.mark_slot(named[key], var, name)
        return named[key]

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        value = tf.convert_to_tensor(val)
        return self._get_or_make_slot_with_initializer(
            var, lambda shape, dtype: tf.cast(value, dtype), value.shape, value.dtype, slot_name, op_name)

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(var, tf.zeros, var.shape, var.dtype.base_dtype, slot_name,
                                                       op_name)

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        if name not in self._non_slots:
            scoped = f"{self._apply_scope}/{name}" if self._apply_scope else name
            unique = scoped if self._call_store is None else self._call_store.non_slot_name(scoped, self)
            with tf1_graph.creating_variable(unique, optimizer_state=True, device=colocate_with.device), \
                    _colocated(colocate_with):
                self._non_slots[name] = tf.Variable(initial_value, name=unique, trainable=False)
        return self._non_slots[name]

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slots.get(name)


def _colocated(variable):
    """Where a strategy places variables itself (a parameter-server job's, round-robin over its ps tasks), a slot
    goes where its variable is: TF1's fused updates (ResourceApplyFtrl, ...) read both in one kernel."""
    if not tf.distribute.has_strategy():
        return contextlib.nullcontext()
    return tf.distribute.get_strategy().extended.colocate_vars_with(variable)


class TFOptimizer(keras.optimizers.Optimizer):
    """A TF1 optimizer given to Keras's compile(), as Keras 2 wrapped one: model_to_estimator trains with the
    TF1 optimizer itself (its update rule, its slots' names); Keras's own fit() cannot run it."""

    def __init__(self, optimizer):
        super().__init__(learning_rate=0.0, name=f"TFOptimizer_{optimizer.get_name()}")
        self.tf1_optimizer = optimizer

    def apply(self, grads, trainable_variables=None):
        raise NotImplementedError(f"compile(optimizer={type(self.tf1_optimizer).__name__}(...)): a TF1 optimizer "
                                  "trains a Keras model through model_to_estimator only; for fit() give a Keras "
                                  "optimizer (keras.optimizers.RMSprop, ...)")


# A program that makes TF1 optimizers may hand one to compile() before model_to_estimator, as Keras 2 took it:
# Keras's compile() is made to wrap it (the one Keras attribute replaced for good; it changes nothing else).
keras_internals.accept_in_compile(Optimizer, TFOptimizer)
