"""tf.compat.v1.train inside model_fn: TF1's optimizers, the global step, Scaffold, init_from_checkpoint.

Every optimizer here is TF1's: its slots and names ("dense/kernel/Momentum",
"beta1_power"), its defaults, and its fused update kernel, applied once per
step to the gradients averaged over the towers (common.tf1_runtime.optimizer says
how). The learning rate may be a number, a tensor of the global step (a TF1
schedule: tf.compat.v1.train.piecewise_constant, polynomial_decay, ...) or a
callable.
"""

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.tf1_runtime import tf1_graph
from common.tf1_runtime.optimizer import Optimizer
from common.tf1_runtime.tf1_graph import variable_name
from common.variables import registry
from common.variables.call_record import CheckpointInit
from common.variables.registry import tf_variable

get_global_step = registry.get_global_step
get_or_create_global_step = registry.get_global_step

__all__ = ["AdadeltaOptimizer", "AdagradDAOptimizer", "AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer",
           "GradientDescentOptimizer", "MomentumOptimizer", "Optimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer", "RMSPropOptimizer", "Scaffold", "get_global_step",
           "get_or_create_global_step", "init_from_checkpoint"]


class _RateOptimizer(Optimizer):
    """An optimizer with a learning rate, turned into a tensor of each variable's dtype when it applies."""

    def __init__(self, learning_rate, use_locking, name):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._rate = tf.convert_to_tensor(self._call_if_callable(self._learning_rate), dtype_hint=tf.float32)

    def _lr(self, var):
        return tf.cast(self._rate, var.dtype.base_dtype)

    def _scalar(self, value, var):
        return tf.cast(self._call_if_callable(value), var.dtype.base_dtype)


class GradientDescentOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate, use_locking, name)

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyGradientDescent(var=var.handle, alpha=self._lr(var), delta=grad,
                                                       use_locking=self._use_locking)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        return tf.raw_ops.ResourceScatterAdd(resource=var.handle, indices=indices, updates=-grad * self._lr(var))


class MomentumOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(learning_rate, use_locking, name)
        self._momentum, self._use_nesterov = momentum, use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyMomentum(
            var=var.handle, accum=self.get_slot(var, "momentum").handle, lr=self._lr(var), grad=grad,
            momentum=self._scalar(self._momentum, var), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyMomentum(
            var=var.handle, accum=self.get_slot(var, "momentum").handle, lr=self._lr(var), grad=grad,
            indices=indices, momentum=self._scalar(self._momentum, var), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)


class AdamOptimizer(_RateOptimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(learning_rate, use_locking, name)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _powers(self, var):
        return [tf.cast(self._get_non_slot_variable(name), var.dtype.base_dtype) for name in ("beta1_power",
                                                                                              "beta2_power")]

    def _resource_apply_dense(self, grad, var):
        beta1_power, beta2_power = self._powers(var)
        return tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=self.get_slot(var, "m").handle, v=self.get_slot(var, "v").handle,
            beta1_power=beta1_power, beta2_power=beta2_power, lr=self._lr(var),
            beta1=self._scalar(self._beta1, var), beta2=self._scalar(self._beta2, var),
            epsilon=self._scalar(self._epsilon, var), grad=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        """TF1's sparse Adam: the moments decayed everywhere, the batch's rows added, every row updated."""
        beta1_power, beta2_power = self._powers(var)
        beta1, beta2 = self._scalar(self._beta1, var), self._scalar(self._beta2, var)
        rate = self._lr(var) * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = m.assign(m * beta1)
        with tf.control_dependencies([m_t]):
            m_t = m.scatter_add(tf.IndexedSlices(grad * (1 - beta1), indices))
        v_t = v.assign(v * beta2)
        with tf.control_dependencies([v_t]):
            v_t = v.scatter_add(tf.IndexedSlices(grad * grad * (1 - beta2), indices))
        return var.assign_sub(rate * m_t / (tf.sqrt(v_t) + self._scalar(self._epsilon, var)))

    def _finish(self, update_ops, name_scope):
        with tf.control_dependencies(update_ops):
            beta1_power = self._get_non_slot_variable("beta1_power")
            beta2_power = self._get_non_slot_variable("beta2_power")
            with tf.device(beta1_power.device):
                updates = [beta1_power.assign(beta1_power * self._beta1), beta2_power.assign(beta2_power * self._beta2)]
        return tf.group(*update_ops, *updates, name=name_scope)


class AdagradOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(learning_rate, use_locking, name)
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, tf.compat.v1.constant_initializer(self._initial), v.shape,
                                                    v.dtype.base_dtype, "accumulator", self._name)

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyAdagrad(var=var.handle, accum=self.get_slot(var, "accumulator").handle,
                                               lr=self._lr(var), grad=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyAdagrad(
            var=var.handle, accum=self.get_slot(var, "accumulator").handle, lr=self._lr(var), grad=grad,
            indices=indices, use_locking=self._use_locking)


class ProximalAdagradOptimizer(AdagradOptimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        super().__init__(learning_rate, initial_accumulator_value, use_locking, name)
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyProximalAdagrad(
            var=var.handle, accum=self.get_slot(var, "accumulator").handle, lr=self._lr(var),
            l1=self._scalar(self._l1, var), l2=self._scalar(self._l2, var), grad=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyProximalAdagrad(
            var=var.handle, accum=self.get_slot(var, "accumulator").handle, lr=self._lr(var),
            l1=self._scalar(self._l1, var), l2=self._scalar(self._l2, var), grad=grad, indices=indices,
            use_locking=self._use_locking)


class ProximalGradientDescentOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(learning_rate, use_locking, name)
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyProximalGradientDescent(
            var=var.handle, alpha=self._lr(var), l1=self._scalar(self._l1, var), l2=self._scalar(self._l2, var),
            delta=grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyProximalGradientDescent(
            var=var.handle, alpha=self._lr(var), l1=self._scalar(self._l1, var), l2=self._scalar(self._l2, var),
            grad=grad, indices=indices, use_locking=self._use_locking)


class RMSPropOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(learning_rate, use_locking, name)
        self._decay, self._momentum, self._epsilon, self._centered = decay, momentum, epsilon, centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, tf.ones, v.shape, v.dtype.base_dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _arguments(self, var, grad):
        return dict(var=var.handle, ms=self.get_slot(var, "rms").handle, mom=self.get_slot(var, "momentum").handle,
                    lr=self._lr(var), rho=self._scalar(self._decay, var), momentum=self._scalar(self._momentum, var),
                    epsilon=self._scalar(self._epsilon, var), grad=grad, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        if self._centered:
            return tf.raw_ops.ResourceApplyCenteredRMSProp(mg=self.get_slot(var, "mg").handle,
                                                          **self._arguments(var, grad))
        return tf.raw_ops.ResourceApplyRMSProp(**self._arguments(var, grad))

    def _resource_apply_sparse(self, grad, var, indices):
        if self._centered:
            return tf.raw_ops.ResourceSparseApplyCenteredRMSProp(mg=self.get_slot(var, "mg").handle,
                                                                indices=indices, **self._arguments(var, grad))
        return tf.raw_ops.ResourceSparseApplyRMSProp(indices=indices, **self._arguments(var, grad))


class AdadeltaOptimizer(_RateOptimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(learning_rate, use_locking, name)
        self._rho, self._epsilon = rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _arguments(self, var, grad):
        return dict(var=var.handle, accum=self.get_slot(var, "accum").handle,
                    accum_update=self.get_slot(var, "accum_update").handle, lr=self._lr(var),
                    rho=self._scalar(self._rho, var), epsilon=self._scalar(self._epsilon, var), grad=grad,
                    use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyAdadelta(**self._arguments(var, grad))

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyAdadelta(indices=indices, **self._arguments(var, grad))


class FtrlOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(learning_rate, use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be positive or zero")
        self._power, self._initial = learning_rate_power, initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._shrinkage, self._beta = l2_shrinkage_regularization_strength, beta or 0.0
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, tf.compat.v1.constant_initializer(self._initial), v.shape,
                                                    v.dtype.base_dtype, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _arguments(self, var, grad):
        # TF1 folds beta into the l2 strength: l2 + beta / (2 * learning rate).
        l2 = self._scalar(self._l2, var) + self._scalar(self._beta, var) / (2.0 * self._lr(var))
        return dict(var=var.handle, accum=self.get_slot(var, "accum").handle,
                    linear=self.get_slot(var, "linear").handle, grad=grad, lr=self._lr(var),
                    l1=self._scalar(self._l1, var), l2=l2, lr_power=self._scalar(self._power, var),
                    use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        if self._shrinkage <= 0.0:
            return tf.raw_ops.ResourceApplyFtrl(**self._arguments(var, grad))
        return tf.raw_ops.ResourceApplyFtrlV2(l2_shrinkage=self._scalar(self._shrinkage, var),
                                              **self._arguments(var, grad))

    def _resource_apply_sparse(self, grad, var, indices):
        if self._shrinkage <= 0.0:
            return tf.raw_ops.ResourceSparseApplyFtrl(indices=indices, **self._arguments(var, grad))
        return tf.raw_ops.ResourceSparseApplyFtrlV2(indices=indices, l2_shrinkage=self._scalar(self._shrinkage, var),
                                                    **self._arguments(var, grad))


class AdagradDAOptimizer(_RateOptimizer):
    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="AdagradDA"):
        super().__init__(learning_rate, use_locking, name)
        self._global_step, self._initial = global_step, initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._get_or_make_slot_with_initializer(v, tf.compat.v1.constant_initializer(self._initial), v.shape,
                                                    v.dtype.base_dtype, "gradient_squared_accumulator", self._name)

    def _arguments(self, var, grad):
        return dict(var=var.handle, gradient_accumulator=self.get_slot(var, "gradient_accumulator").handle,
                    gradient_squared_accumulator=self.get_slot(var, "gradient_squared_accumulator").handle,
                    grad=grad, lr=self._lr(var), l1=self._scalar(self._l1, var), l2=self._scalar(self._l2, var),
                    global_step=tf.cast(self._global_step, tf.int64) + 1, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyAdagradDA(**self._arguments(var, grad))

    def _resource_apply_sparse(self, grad, var, indices):
        return tf.raw_ops.ResourceSparseApplyAdagradDA(indices=indices, **self._arguments(var, grad))


class Scaffold:
    """tf.compat.v1.train.Scaffold's arguments. Here: `saver` (a tf.train.Checkpoint: checkpoints are written
    and resumed through it, object-based; a tf.compat.v1.train.Saver: its max_to_keep and
    keep_checkpoint_every_n_hours) and `init_fn(scaffold, session)` (called when a model starts from nothing;
    there is no session, it is None) are honoured; the init and ready ops of a TF1 session have nothing to do."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            init_fn = init_fn or copy_from_scaffold.init_fn
            saver = saver or copy_from_scaffold.saver
        self.init_fn, self.saver = init_fn, saver

    def finalize(self):
        return self


def _checkpoint_file(ckpt_dir_or_file):
    if tf.io.gfile.isdir(ckpt_dir_or_file):
        path = tf.train.latest_checkpoint(ckpt_dir_or_file)
        if not path:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {ckpt_dir_or_file}")
        return path
    return ckpt_dir_or_file


def _scope_tensors(checkpoint_scope, current_scope, variables, saved):
    """TF1's scope form of an assignment map: every variable under current_scope from checkpoint_scope."""
    if not checkpoint_scope.endswith("/"):
        raise ValueError(f"Assignment map with scope only name {current_scope} should map to scope only "
                         f"{checkpoint_scope}. Should be 'scope/': 'other_scope/'.")
    scopes = current_scope[:current_scope.rindex("/")] if "/" in current_scope else ""
    found = {}
    for name in sorted(variables):
        if scopes and not name.startswith(scopes + "/"):
            continue
        tensor = name[len(scopes):]
        if current_scope != "/":
            tensor = tensor[1:]
        if checkpoint_scope != "/":
            tensor = checkpoint_scope + tensor
        tensor = tensor.rstrip("/")
        if tensor not in saved:
            raise ValueError(f"Tensor {tensor} ({name} in {current_scope}) is not found in checkpoint")
        found[name] = tensor
    return found


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """tf.compat.v1.train.init_from_checkpoint in model_fn: the variables the map names start from the
    checkpoint's tensors (TF1's assignment-map rules: "scope/": "scope/", or one name to a variable or its
    name). As in TF1 it sets how the variables are initialized: a model_dir that holds a checkpoint is
    restored from it instead."""
    path = _checkpoint_file(ckpt_dir_or_file)
    saved = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    store = tf1_graph.active_store()
    variables = {} if store is None else dict(store.variables)
    tensors = {}
    for tensor_name, current in sorted(assignment_map.items(), key=lambda item: item[0]):
        if isinstance(current, (tf.Variable, list)) or hasattr(current, "handle"):
            targets = current if isinstance(current, list) else [current]
            chosen = {variable_name(tf_variable(v)): tensor_name for v in targets}
        elif current in variables:
            chosen = {current: tensor_name}
        else:
            chosen = _scope_tensors(tensor_name, current, variables, saved)
        for name, tensor in chosen.items():
            if tensor not in saved:
                raise ValueError(f"Tensor {tensor} is not found in {path} checkpoint")
            shape = variables[name].shape.as_list() if name in variables else None
            if shape is not None and saved[tensor] != shape:
                raise ValueError(f"Shape of variable {name} ({shape}) doesn't match with shape of tensor {tensor} "
                                 f"({saved[tensor]}) from checkpoint reader.")
            tensors[name] = tensor
    if registry.running_model_fn():
        registry.active_registry().call.checkpoint_inits.append(CheckpointInit(path, tensors))
    else:
        logging.warning("init_from_checkpoint outside model_fn does nothing here")
