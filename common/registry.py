"""The Estimator's module registry: how a model_fn gets the same network on every call.

A model_fn runs once per tower, per mode and per retrace. In TF1 variable
scopes made those calls share variables; in TF2 variables belong to
objects, so the model_fn asks the registry for its network:

    net = common.get_module("resnet", lambda: ResNet(params))

and gets the same object on every call. Variables may only be created
during the Estimator's first (build) call of model_fn; a later call that
creates one fails with a message saying so, instead of silently giving
each tower its own weights.
"""

import collections
import contextlib
import contextvars
import dataclasses
from typing import Optional

import tensorflow as tf

from common import checkpoints, precision

_ACTIVE = contextvars.ContextVar("common_active_registry", default=None)


class VariableCreationError(Exception):
    """A model_fn created a variable after the model was built.

    (A direct Exception subclass: AutoGraph re-raises those with their own
    type from inside a trace, where a RuntimeError subclass would become a
    StagingError.)"""


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


@contextlib.contextmanager
def _fresh_keras_names():
    """Gives a module's Keras layers default names that do not depend on what
    was built before in this process ("dense", not "dense_7"), so checkpoint
    names agree between a training run and a later process that resumes it."""
    try:
        from keras.src.backend.common import global_state
    except ImportError:  # a Keras without this internal: names stay process-wide
        yield
        return
    saved = global_state.get_global_attribute("object_name_uids")
    global_state.set_global_attribute("object_name_uids", collections.defaultdict(int))
    try:
        yield
    finally:
        global_state.set_global_attribute("object_name_uids", saved)


class ModelRegistry:
    """The modules, the global step and the rule on variable creation."""

    def __init__(self, consolidation_device):
        self.modules = collections.OrderedDict()
        self.optimizer = None
        self._consolidation_device = consolidation_device
        self._making_optimizer = False
        with tf.device(consolidation_device):
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name="global_step"
            )
        self._building = False
        self._global_step_read = None

    @contextlib.contextmanager
    def model_fn_scope(self, building=False, placing_creator=None, global_step=None):
        """Makes this registry the one model_fn sees, and rules variable creation.

        building: variables may be created (the first call), each through
        `placing_creator` (see common.placement); otherwise creating one is a
        VariableCreationError. The optimizer's own variables are exempt.
        global_step: what get_global_step() answers instead of the variable
        (an XLA-compiled tower gets the step's value: it cannot read a
        variable on another device).
        """
        token = _ACTIVE.set(self)
        outer = self._building, self._global_step_read
        self._building = building
        self._global_step_read = global_step

        @tf.autograph.experimental.do_not_convert
        def creator(next_creator, **kwargs):
            if self._making_optimizer:
                return next_creator(**kwargs)
            if not self._building:
                raise VariableCreationError(
                    f"model_fn created the variable {kwargs.get('name')!r} after the model "
                    "was built. Every tower and mode must share one set of variables: "
                    "create layers once through common.get_module(name, factory) and "
                    "call them in model_fn."
                )
            if placing_creator is None:
                return next_creator(**kwargs)
            return placing_creator(next_creator, **kwargs)

        try:
            with tf.variable_creator_scope(creator):
                yield
        finally:
            self._building, self._global_step_read = outer
            _ACTIVE.reset(token)

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
            with _fresh_keras_names():
                self.modules[name] = factory()
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

    def tracked_variables(self):
        """Every variable of every module, with its stable name, in creation order."""
        tracked, seen, names = [], set(), set()
        for module_name, module in self.modules.items():
            for variable in getattr(module, "variables", ()):
                inner = getattr(variable, "value", variable)
                if not isinstance(inner, tf.Variable):
                    inner = variable
                name = checkpoints.module_variable_name(module_name, variable)
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
    variable, or its value inside an XLA-compiled tower."""
    return active_registry().global_step_for_model_fn()

