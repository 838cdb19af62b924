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
from typing import Optional

import tensorflow as tf

from common.devices import placement, precision
from common.state import checkpoints
from common.variables import keras_internals, served as served_variables
from common.variables.served import VariableCreationError

_ACTIVE = contextvars.ContextVar("common_active_registry", default=None)
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
    """The modules, the variables model_fn builds itself, the global step and
    the rules on variable creation."""

    def __init__(self, consolidation_device):
        self.modules = collections.OrderedDict()
        self.served = served_variables.ServedVariables("model")
        self.metric_state = served_variables.ServedVariables("metric")
        self.optimizer = None
        self._consolidation_device = consolidation_device
        self._making_optimizer = False
        self._factories_running = 0
        with tf.device(consolidation_device):
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name="global_step"
            )
        self._building = False
        self._global_step_read = None
        self.summaries = {}  # name -> scalar tensor the model_fn call now running wrote (common.tf1.summary)
        self.regularization_losses = []  # those of the TF1 layers the call now running built (common.tf1.layers)

    @contextlib.contextmanager
    def model_fn_scope(self, building=False, placing_creator=None, global_step=None):
        """Makes this registry the one model_fn sees, and rules variable creation.

        building: variables may be created (the first call), each through
        `placing_creator` (see common.placement); otherwise each variable
        model_fn creates is served the one its first call created. Metric
        state is created in any call, on the consolidation device; the
        optimizer's variables are exempt.
        global_step: the variable get_global_step() answers instead of the
        global step (an XLA-compiled tower gets a copy on its own device: it
        cannot read a variable on another device).
        """
        token = _ACTIVE.set(self)
        outer = self._building, self._global_step_read, self.summaries, self.regularization_losses
        self._building = building
        self._global_step_read = global_step
        self.summaries = {}
        self.regularization_losses = []

        def create(next_creator, kwargs):
            if placing_creator is None:
                return next_creator(**kwargs)
            return placing_creator(next_creator, **kwargs)

        @tf.autograph.experimental.do_not_convert
        def creator(next_creator, **kwargs):
            if self._making_optimizer:
                return next_creator(**kwargs)
            if self._factories_running:
                return create(next_creator, kwargs)
            key = call.key(kwargs.get("name"))
            if served_variables.creating_metric():
                return self._metric_variable(key, next_creator, kwargs)
            if self._building:
                variable = create(next_creator, kwargs)
                self.served.record(key, variable)
                return variable
            shape, dtype = placement.requested_shape_and_dtype(kwargs)
            return self.served.serve(key, shape, dtype)

        try:
            with served_variables.model_fn_call(self.served) as call, \
                    tf.variable_creator_scope(creator):
                yield
            if building:
                self.served.forget(self._module_variables())
        finally:
            self._building, self._global_step_read, self.summaries, self.regularization_losses = outer
            _ACTIVE.reset(token)

    def add_summary(self, name, value):
        """Records a scalar model_fn wrote as a summary; the spec offers it with its scalars."""
        if name in self.summaries:
            raise ValueError(f"model_fn wrote the summary {name!r} twice in one call")
        self.summaries[name] = value

    def _module_variables(self):
        """The tf.Variables the registered modules own (built in their factory or
        on their first call)."""
        return [getattr(v, "value", v) for module in self.modules.values() for v in getattr(module, "variables", ())]

    def _metric_variable(self, key, next_creator, kwargs):
        if key in self.metric_state.variables:
            return self.metric_state.serve(key, *placement.requested_shape_and_dtype(kwargs))
        with tf.init_scope(), tf.device(self._consolidation_device):
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
        """The optimizer, made once by `factory()` outside any trace on the
        consolidation device (Keras optimizers create variables in __init__),
        and wrapped for loss scaling under a float16 policy."""
        if self.optimizer is None:
            self._making_optimizer = True
            try:
                with tf.init_scope(), tf.device(self._consolidation_device):
                    self.optimizer = precision.with_loss_scaling(factory())
            finally:
                self._making_optimizer = False
        return self.optimizer

    def trainable_variables(self):
        """The trainable model variables so far, in creation order: while the
        first call builds, the variables themselves; after it, what layers and
        optimizers know (common.tf1.variables)."""
        if self._building:
            variables = {id(v): v for v in self._module_variables() + list(self.served.variables.values())}
            return [v for v in variables.values() if v.trainable]
        return [t.api_variable for t in self.tracked_variables() if t.trainable]

    def tracked_variables(self):
        """Every model variable with its stable name, in creation order: the
        modules' first, then the ones model_fn built itself ("model_fn/<path>")."""
        tracked, seen, names = [], set(), set()
        owned = [(module_name, [(checkpoints.module_variable_name(module_name, v), v)
                                for v in getattr(module, "variables", ())])
                 for module_name, module in self.modules.items()]
        served = [self.served.keras_variable(key) for key in self.served.variables]
        owned.append((checkpoints.MODEL_FN_SCOPE, [(v.path, v) for v in served]))  # path: "model_fn/<key>"
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
        return tracked


def running_model_fn():
    """Whether a model_fn is being called by an Estimator now."""
    return _ACTIVE.get() is not None


def active_registry():
    registry = _ACTIVE.get()
    if registry is None:
        raise RuntimeError(
            "common.get_module, get_optimizer and get_global_step only work inside a "
            "model_fn called by a common.Estimator"
        )
    return registry


def get_module(name, factory):
    """The module registered under `name`, built by `factory()` on first use."""
    return active_registry().get_module(name, factory)


def get_optimizer(factory):
    """The Estimator's optimizer, built by `factory()` on first use:

        optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(momentum=0.9))
    """
    return active_registry().get_optimizer(factory)


def get_global_step():
    """The Estimator's global step, as tf.train.get_global_step was: the int64
    variable (inside an XLA-compiled tower, its copy on the tower's device;
    inside a TF1 hook's methods, the running Estimator's)."""
    hook_step = _HOOK_GLOBAL_STEP.get()
    if hook_step is not None and _ACTIVE.get() is None:
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
