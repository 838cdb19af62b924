"""The Estimator's module registry: how a model_fn gets the same network on every call.

A model_fn runs once per tower, per mode and per retrace. In TF1 variable
scopes made those calls share variables; in TF2 variables belong to
objects, so the model_fn asks the registry for its network:

    net = common.get_module("resnet", lambda: ResNet(params))

and gets the same object on every call. A model_fn may also build its
Keras layers and metrics itself, as TF 2.x estimator code did: the first
(build) call creates their variables and every later call is served the
same ones (common.variables.served). Nothing model_fn creates goes
untracked: each variable is a module's, a served one, a metric's or the
optimizer's.
"""

import collections
import contextlib
import contextvars
import dataclasses
import functools
from typing import Optional

import tensorflow as tf

from common.devices import placement, precision
from common.internals import keras_internals
from common.state import checkpoints
from common.tf1_runtime import caller, tf1_graph
from common.tf1_runtime.tf1_graph import tf_variable  # noqa: F401 (read here by the engine and common.tf1)
from common.variables import call_record, keras_optimizers
from common.variables import served as served_variables
from common.variables.served import VariableCreationError

# The collections of a TF1 variable that is a metric's state (a custom streaming metric's count), not the model's.
_LOCAL_COLLECTIONS = {tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.METRIC_VARIABLES}
_HOOK_GLOBAL_STEP = contextvars.ContextVar("common_hook_global_step", default=None)


@dataclasses.dataclass(frozen=True)
class TrackedVariable:
    """A model variable with the stable name used in checkpoints and warm start."""

    name: str
    variable: tf.Variable
    keras_variable: Optional[object]
    trainable: bool

    @property
    def api_variable(self):
        """The object layers and optimizers know: the Keras variable if any."""
        return self.variable if self.keras_variable is None else self.keras_variable


class ModelRegistry:
    """The modules, the variables model_fn builds itself (by Keras path or by
    TF1 name), the optimizer, the global step and the rules on variable
    creation; and, while model_fn runs, what the call records (`call`)."""

    def __init__(self, consolidation_device):
        self.modules = collections.OrderedDict()
        self.served = served_variables.ServedVariables("model")
        self.tf1 = served_variables.ServedVariables("TF1", prefix="")  # by full TF1 name, checkpointed under it
        self.metric_state = served_variables.ServedVariables("metric")
        self.optimizer_state = served_variables.ServedVariables("optimizer")  # Keras optimizers model_fn made
        self.tf1_optimizer_state = served_variables.ServedVariables("TF1 optimizer", prefix="")  # slots by TF1 name
        self.optimizer = None
        self._consolidation_device = consolidation_device
        self._making_optimizer = False
        self._factories_running = 0
        with tf.device(consolidation_device):
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name="global_step"
            )
        self._building = False
        self._deferring = False
        self._applying = False
        self._global_step_read = None
        self.call = None  # the CallRecord of the model_fn call now running
        self._tracked = []  # the TrackedVariables not made by TF1's store, as tracked_variables last found them

    @contextlib.contextmanager
    def model_fn_scope(self, building=False, placing_creator=None, global_step=None, deferring=False, applying=False,
                       calling=True):
        """Makes this registry the one model_fn sees, and rules variable creation.

        building: variables may be created (the first call), each through `placing_creator` (see
        common.devices.placement) and outside the trace; otherwise each variable model_fn creates is served
        the one its first call created. Metric state is created in any call, on the consolidation device; the
        optimizer's variables are exempt.
        global_step: the variable get_global_step() answers instead of the global step (a train tower's view
        of it: see common.engine.step).
        deferring: an optimizer's apply_gradients is recorded in the call's CallRecord, not done (a call of
        model_fn). applying: deferred updates are being done; every variable made is optimizer state, created
        when it is first asked for.
        calling: model_fn (or an update) is called in the scope, which gets a fresh TF1 graph's state; else
        the scope only rules a trace that will call it (a loop's).
        Yields the call's CallRecord; the default graph's TF1 state is a fresh graph's while it runs
        (common.tf1_runtime.tf1_graph).
        """
        outer = self._building, self._global_step_read, self.call, self._deferring, self._applying
        self._building = building
        self._global_step_read = global_step
        self._deferring = deferring
        self._applying = applying
        self.call = call_record.CallRecord(graph=tf.compat.v1.get_default_graph())

        def create(next_creator, kwargs):
            if placing_creator is None:
                return next_creator(**kwargs)
            return placing_creator(next_creator, **kwargs)

        @tf.autograph.experimental.do_not_convert
        def creator(next_creator, **kwargs):
            if self._making_optimizer:
                with placement.outside_the_trace(kwargs) as kwargs:
                    return next_creator(**kwargs)
            tf1 = tf1_graph.creating()
            if _LOCAL_COLLECTIONS & set(kwargs.get("collections") or ()):  # metric state: zeroed, not saved
                return self._metric_variable(tf1.name if tf1 else call.key(kwargs.get("name")), next_creator, kwargs)
            if tf1 is not None:
                return self._tf1_variable(tf1, next_creator, kwargs, create)
            if self._factories_running:  # (made in the trace, which lifts them: model_to_estimator's copy of a
                return create(next_creator, kwargs)  # Keras model, made in its factory, went wrong made outside it)
            metric = served_variables.creating_metric()
            optimizer = None if metric else served_variables.creating_optimizer()
            key = call.key(kwargs.get("name"), graph_scoped=not metric and optimizer is None and not self._applying
                           and "use_resource" in kwargs)  # (a TF1 tf.compat.v1.Variable's: TF1 named it by scope)
            if metric:
                return self._metric_variable(key, next_creator, kwargs)
            if optimizer is not None:
                keras_optimizers.defer_apply(optimizer, deferring_updates,
                                             functools.partial(defer_update, keras_variables=True))
            if optimizer is not None or self._applying:
                return self._optimizer_variable(self.optimizer_state, key, next_creator, kwargs)
            if self._building:
                with placement.outside_the_trace(kwargs) as kwargs:
                    variable = create(next_creator, kwargs)
                self.served.record(key, variable)
            else:
                variable = self.served.serve(key, *placement.requested_shape_and_dtype(kwargs))
            tf1_graph.collect(variable, self.call.graph)
            return variable

        try:
            with caller.answering(self), keras_internals.in_model_fn(), \
                    served_variables.model_fn_call(self.served) as call, tf.variable_creator_scope(creator), \
                    (tf1_graph.fresh_graph(self.global_step_for_model_fn(), self.tf1.variables) if calling
                     else contextlib.nullcontext()):
                if calling and not building:  # (a train tower's Keras layers defer making theirs: listed at once)
                    for tracked in self._tracked:
                        tf1_graph.collect(tracked.variable, self.call.graph)
                yield self.call
                if calling:
                    self.call.keep_graph_state()
            if building:
                self.served.forget(self._module_variables())
        finally:
            self._building, self._global_step_read, self.call, self._deferring, self._applying = outer

    def _tf1_variable(self, tf1, next_creator, kwargs, create):
        """A variable TF1's store makes: created under its TF1 name, or served."""
        if tf1.optimizer_state or self._applying:
            return self._optimizer_variable(self.tf1_optimizer_state, tf1.name, next_creator, kwargs, tf1.device)
        if not self._building:
            return self.tf1.serve(tf1.name, *placement.requested_shape_and_dtype(kwargs))
        with placement.outside_the_trace(kwargs) as kwargs:
            variable = create(next_creator, kwargs)
        self.tf1.record(tf1.name, variable)
        return variable

    @staticmethod
    def _optimizer_variable(store, key, next_creator, kwargs, device=None):
        """Optimizer state: served when it exists, made when first asked for (in the TRAIN probe, where
        the updates are first done), on `device` (a slot's: its variable's) or where its maker puts it."""
        if key in store.variables:
            return store.serve(key, *placement.requested_shape_and_dtype(kwargs))
        with placement.outside_the_trace(kwargs) as kwargs, tf.device(device) if device else contextlib.nullcontext():
            variable = next_creator(**kwargs)
        store.record(key, variable)
        return variable

    @property
    def deferring(self):
        """Whether an optimizer's apply_gradients is to be recorded, not done (see model_fn_scope)."""
        return self._deferring

    def defer_update(self, optimizer, grads_and_vars, apply, keras_variables=False):
        """Records an optimizer's apply_gradients in the running train tower's call
        (see call_record.DeferredUpdate); returns the op that stands for it. A
        variable a train tower's Keras layer stands in for becomes the one it
        serves: its Keras variable for a Keras optimizer (keras_variables), else
        the tf.Variable, named as TF1 code reads it."""
        call_record.refuse_conditional_update(self.call.graph)

        def resolved(variable):
            served = served_variables.served_variable(variable)
            return self.keras_view(served) if keras_variables else tf_variable(served)

        pairs = [(g, resolved(v)) for g, v in grads_and_vars]
        self.call.updates.append(call_record.DeferredUpdate(optimizer, pairs, apply))
        return tf.no_op(name="deferred_update")

    def add_summary(self, name, value):
        """Records a scalar model_fn wrote as a summary; the spec offers it with its scalars."""
        if name in self.call.scalars:
            raise ValueError(f"model_fn wrote the summary {name!r} twice in one call")
        self.call.scalars[name] = value

    def _module_variables(self):
        """The tf.Variables the registered modules own (built in their factory or on their first call)."""
        return [getattr(v, "value", v) for module in self.modules.values() for v in getattr(module, "variables", ())]

    def _metric_variable(self, key, next_creator, kwargs):
        if key in self.metric_state.variables:
            return self.metric_state.serve(key, *placement.requested_shape_and_dtype(kwargs))
        with placement.outside_the_trace(kwargs) as kwargs, tf.device(self._consolidation_device):
            variable = next_creator(**kwargs)
        self.metric_state.record(key, variable)
        return variable

    def global_step_for_model_fn(self):
        return self.global_step if self._global_step_read is None else self._global_step_read

    def get_module(self, name, factory):
        if not isinstance(name, str) or not name or "/" in name or name in checkpoints.RESERVED_MODULE_NAMES:
            raise ValueError(
                f"module name {name!r} is reserved or invalid; names may not be "
                f"{', '.join(checkpoints.RESERVED_MODULE_NAMES)}, empty, or contain '/'")
        if name not in self.modules:
            if not self._building:
                raise VariableCreationError(
                    f"model_fn asked for a new module {name!r} after the model was "
                    "built; every module must be created on the first call"
                )
            self._factories_running += 1
            try:
                with keras_internals.fresh_object_names():
                    self.modules[name] = factory()
            finally:
                self._factories_running -= 1
        return self.modules[name]

    def get_optimizer(self, factory):
        """The optimizer, made once by `factory()` outside any trace on the consolidation device (Keras
        optimizers create variables in __init__), and wrapped for loss scaling under a float16 policy."""
        if self.optimizer is None:
            with self.making_optimizer(), tf.device(self._consolidation_device):
                self.optimizer = precision.with_loss_scaling(factory())
        return self.optimizer

    @contextlib.contextmanager
    def making_optimizer(self):
        """Outside any trace: the variables made are an optimizer's own (constructor, build), in no store."""
        self._making_optimizer = True
        try:
            with tf.init_scope():
                yield
        finally:
            self._making_optimizer = False

    def trainable_variables(self):
        """The trainable model variables so far, in creation order: while the first call builds, the variables
        themselves; after it, what layers know (common.tf1.variables): get_variable's as it serves them, named
        as TF1 named them; a Keras layer's as its Keras variable."""
        if self._building:
            variables = {id(v): v for v in self._module_variables() + list(self.served.variables.values())
                         + list(self.tf1.variables.values())}
            return [v for v in variables.values() if v.trainable]
        return [t.variable if self.tf1.key_of(t.variable) is not None else t.api_variable
                for t in self.tracked_variables() if t.trainable]

    def keras_view(self, variable):
        """The Keras variable over `variable` when a store holds it (what a Keras optimizer is to update: its
        path names the optimizer's slots alike in every call), else `variable`."""
        held = self._store_and_key(variable)
        return variable if held is None else held[0].keras_variable(held[1])

    def _store_and_key(self, variable):
        """(store, key) of the TF1 or served store holding `variable`, or None."""
        inner = tf_variable(variable)
        for store in (self.tf1, self.served):
            key = store.key_of(inner)
            if key is not None:
                return store, key
        return None

    def tracked_variables(self):
        """Every model variable with its stable name, in creation order: the modules' first, then the ones
        model_fn built itself ("model_fn/<path>" for Keras layers', the full TF1 name for get_variable's)."""
        tracked, seen, names = [], set(), set()
        owned = [(module_name, [(checkpoints.module_variable_name(module_name, v), v)
                                for v in getattr(module, "variables", ())])
                 for module_name, module in self.modules.items()]
        for store in (self.served, self.tf1):
            wrapped = [store.keras_variable(key) for key in store.variables]
            owned.append((store.kind, [(v.path, v) for v in wrapped]))  # path: the checkpoint name
        for module_name, variables in owned:
            for name, variable in variables:
                inner = getattr(variable, "value", variable)
                if not isinstance(inner, tf.Variable):
                    inner = variable
                if id(inner) in seen:
                    continue
                if name in names:
                    raise ValueError(
                        f"two variables of module {module_name!r} are both named "
                        f"{name!r}; give their layers distinct names"
                    )
                seen.add(id(inner))
                names.add(name)
                keras_variable = variable if variable is not inner else None
                tracked.append(TrackedVariable(name, inner, keras_variable, bool(variable.trainable)))
        tf1_names = set(self.tf1.variables)
        self._tracked = [t for t in tracked if t.name not in tf1_names]
        return tracked

    def name_of(self, variable):
        """The name a TF1 graph gave `variable`: its TF1 name, or the Keras path of a layer's model_fn built
        ("linear/kernel"), or a module's checkpoint name; None for a variable the registry does not hold."""
        held = self._store_and_key(variable)
        if held is not None:
            return held[1]
        inner = tf_variable(variable)
        for module_name, module in self.modules.items():
            for owned in getattr(module, "variables", ()):
                if getattr(owned, "value", owned) is inner:
                    return checkpoints.module_variable_name(module_name, owned)
        return None

    def optimizer_state_variables(self):
        """name -> variable of the optimizer state model_fn made itself (Keras optimizers' and TF1 slots)."""
        return {store.name(key): variable for store in (self.optimizer_state, self.tf1_optimizer_state)
                for key, variable in store.variables.items()}


def running_model_fn():
    """Whether a model_fn is being called by an Estimator now."""
    return caller.current() is not None


def active_registry():
    registry = caller.current()
    if registry is None:
        raise RuntimeError(
            "common.get_module, get_optimizer and get_global_step only work inside a "
            "model_fn called by a common.Estimator"
        )
    return registry


def defer_update(optimizer, grads_and_vars, apply, keras_variables=False):
    """The running call's ModelRegistry.defer_update."""
    return active_registry().defer_update(optimizer, grads_and_vars, apply, keras_variables)


def deferring_updates():
    """Whether an optimizer's apply_gradients, called now, is to be deferred (a train tower's call)."""
    registry = caller.current()
    return registry is not None and registry.deferring


def assign_after_step(variable, value):
    """Files `variable` to be assigned `value` after the step (averaged over the
    towers), when a model_fn call is running; otherwise assigns it now. Returns the op."""
    registry = caller.current()
    if registry is None:
        return variable.assign(value)
    registry.call.assigns.append((variable, value))
    return tf.no_op(name="assign_after_step")


def get_module(name, factory):
    """Inside model_fn: the network (any object owning variables: a Keras layer or model) registered under
    `name`, built by `factory()` on the first call, the same object on every later call (each tower, mode and
    retrace). This is how model_fn shares its variables in TF2, where TF1 shared them by variable scope.

    Args:
      name: the module's name: its variables are checkpointed under "<name>/<path>"; not empty, without "/".
      factory: a function of no argument that builds the module, called once.
    Returns:
      The module.
    Raises:
      ValueError: name is reserved or invalid.
      common.VariableCreationError: a new name is asked for after the model was built.
      RuntimeError: called outside a model_fn an Estimator runs.
    """
    return active_registry().get_module(name, factory)


def get_optimizer(factory):
    """Inside model_fn: the Estimator's optimizer, built by `factory()` on the first call and the same object
    after (Keras optimizers make variables as they are built): `common.get_optimizer(lambda: SGD(0.1))`.

    Args:
      factory: a function of no argument returning a keras.optimizers.Optimizer, called once.
    Returns:
      The optimizer, for EstimatorSpec(optimizer=...).
    Raises:
      RuntimeError: called outside a model_fn an Estimator runs.
    """
    return active_registry().get_optimizer(factory)


def get_global_step():
    """The Estimator's global step, as tf.train.get_global_step was.

    Returns:
      The int64 variable (inside an XLA-compiled tower, its value on the tower's device; inside a TF1 hook's
      methods, the running Estimator's).
    Raises:
      RuntimeError: called outside a model_fn (or TF1 hook) an Estimator runs.
    """
    hook_step = _HOOK_GLOBAL_STEP.get()
    if hook_step is not None and caller.current() is None:
        return hook_step
    return active_registry().global_step_for_model_fn()


@contextlib.contextmanager
def global_step_for_hooks(global_step):
    """While a TF1 hook's method runs: get_global_step() answers `global_step`."""
    token = _HOOK_GLOBAL_STEP.set(global_step)
    try:
        yield
    finally:
        _HOOK_GLOBAL_STEP.reset(token)
