"""Variables that model_fn creates itself, as TF 2.x estimator code did.

Under tf.estimator each call of model_fn built a fresh graph, so programs
built their Keras layers (and Keras metrics) inside model_fn. Here model_fn
runs once per tower, mode and retrace, and all of them must share one set of
variables. This module keeps the variables of the first (building) call
under a key that is the same in every call: the Keras path the variable gets
("sequential/dense/kernel"; layer names are numbered afresh in each call,
see `keras_internals.fresh_object_names`), made unique within the call by a counter. A later
call is served the variable of the same key; one that asks for a key the
first call did not create, or with another shape or dtype, is an error
naming it. (TensorFlow's own shim for TF1-style variables,
`track_tf1_style_variables`, matches by name in the same way.)

A train tower runs model_fn inside a Keras StatelessScope (see
common.engine.step); Keras defers the variables a layer creates there and
asks the scope for their values. `TowerStateScope` answers with the served
variable's value and files the deferred variable's updates under it.
"""

import collections
import contextlib
import contextvars
from typing import Dict, Optional

import keras
import tensorflow as tf

from common.internals import keras_internals
from common.state import checkpoints
from common.tf1_runtime import tf1_graph

_ACTIVE_CALL = contextvars.ContextVar("common_model_fn_call", default=None)


class VariableCreationError(Exception):
    """A model_fn created a variable its first call did not create (a tower or mode would get weights of its
    own): the message names the variable.

    (A direct Exception subclass: AutoGraph re-raises those with their own
    type from inside a trace, where a RuntimeError subclass would become a
    StagingError.)"""


def creating_metric():
    """Whether the variable being created belongs to a Keras metric."""
    return any(isinstance(entry.caller, keras.metrics.Metric) for entry in keras_internals.name_scope_stack())


def creating_optimizer():
    """The Keras optimizer whose variable is being created (model_fn made it), or None."""
    for entry in keras_internals.name_scope_stack():
        if isinstance(entry.caller, keras.optimizers.Optimizer):
            return entry.caller
    return None


def _path_here(name):
    parts = []
    for entry in keras_internals.name_scope_stack():
        if entry.override_parent is not None:
            parts = [p for p in entry.override_parent.split("/") if p]
        parts.append(entry.name)
    return "/".join(parts + [name])


def _keras_wrapper(path, variable):
    """A Keras variable over `variable` whose path is `path`, its checkpoint
    name: what the optimizer is built on (its slot names come from the path,
    so they cannot clash with a module's) and what a compiled tower's state
    mapping is keyed by."""
    *scopes, name = path.split("/")
    with contextlib.ExitStack() as stack:
        stack.enter_context(keras_internals.outside_stateless_scope())  # a wrapper is made, not deferred
        for scope in scopes:
            stack.enter_context(keras.name_scope(scope, deduplicate=False))
        return keras.Variable(variable, trainable=variable.trainable, name=name)


class ServedVariables:
    """key -> variable of one kind (model variables, TF1 ones, metric or
    optimizer state); each is checkpointed as prefix + key."""

    def __init__(self, kind, prefix=checkpoints.MODEL_FN_SCOPE + "/"):
        self.kind = kind
        self.prefix = prefix
        self.variables: Dict[str, tf.Variable] = {}
        self._wrappers: Dict[str, object] = {}
        self._keys = {}  # id(variable) -> its key

    def record(self, key, variable):
        self.variables[key] = variable
        self._keys[id(variable)] = key

    def forget(self, variables):
        """Drops these variables (a module's, recorded while it was built on
        its first call: the module serves them, not this store)."""
        owned = {id(v) for v in variables}
        self.variables = {k: v for k, v in self.variables.items() if id(v) not in owned}
        self._keys = {id(v): k for k, v in self.variables.items()}

    def key_of(self, variable):
        """The key `variable` (a tf.Variable) is held under, or None."""
        key = self._keys.get(id(variable))
        return key if key is not None and self.variables.get(key) is variable else None

    def serve(self, key, shape, dtype):
        """The variable recorded under `key`, checked against what the call asks for."""
        variable = self.variables.get(key)
        if variable is None:
            known = ", ".join(list(self.variables)[:5]) or "none"
            raise VariableCreationError(
                f"model_fn created the {self.kind} variable {key!r}, which its first call did not "
                f"create (first of those it did: {known}). Every call of model_fn (each tower and "
                "mode) must build the same layers in the same order; build optional parts on "
                "every call, or create them once through common.get_module(name, factory).")
        if shape is not None and tf.TensorShape(shape).is_fully_defined() \
                and tf.TensorShape(shape) != variable.shape:
            raise VariableCreationError(
                f"model_fn asked for the {self.kind} variable {key!r} with shape "
                f"{tf.TensorShape(shape)}, but its first call created it with shape {variable.shape}; "
                "every call of model_fn must build the same layers")
        if dtype is not None and tf.as_dtype(dtype).base_dtype != variable.dtype.base_dtype:
            raise VariableCreationError(
                f"model_fn asked for the {self.kind} variable {key!r} as {tf.as_dtype(dtype).name}, "
                f"but its first call created it as {variable.dtype.name}")
        return variable

    def name(self, key):
        """The checkpoint name of the variable served under `key`."""
        return self.prefix + key

    def keras_variable(self, key):
        if key not in self._wrappers:
            self._wrappers[key] = _keras_wrapper(self.name(key), self.variables[key])
        return self._wrappers[key]


class ModelFnCall:
    """One call of model_fn: the keys given out so far (for uniqueness) and
    the deferred Keras variables matched to served ones."""

    def __init__(self, model):
        self.model = model
        self._used = collections.Counter()
        self._deferred = {}  # id(deferred Keras variable) -> key in model, or None
        self.entry_scope = tf.compat.v1.get_default_graph().get_name_scope()  # (a tower's): set as model_fn starts

    def key(self, name, graph_scoped=False):
        """The call-unique key of a variable named `name` created here and now: its Keras path, or (graph_scoped:
        a TF1 model variable) made outside any Keras layer or scope, its name under the name scopes model_fn
        opened (TF1's variable scopes among them), as a TF1 graph named it."""
        path = keras_internals.initializing_path() or _path_here((name or "Variable").split(":")[0])
        if graph_scoped and "/" not in path:
            entry = _ACTIVE_CALL.get(self).entry_scope  # (the innermost call's: an enclosing scope's creator asks too)
            scope = tf1_graph.scope_within(entry)
            path = f"{scope}/{path}" if scope else path
        return self._unique(path)

    def _unique(self, path):
        """`path`, or "<path>_<n>" when this call already gave it out n times."""
        count = self._used[path]
        self._used[path] += 1
        return path if count == 0 else f"{path}_{count}"

    def match_deferred(self, variable):
        """The key of the served model variable a deferred Keras variable stands
        for; None for other state (a metric's, updated in a train tower, where
        nothing reads it), which then reads as its initial value."""
        if id(variable) not in self._deferred:
            key = self._unique(variable.path)
            if key not in self.model.variables and variable.trainable:
                self.model.serve(key, variable.shape, variable.dtype)  # raises, naming it
            self._deferred[id(variable)] = key if key in self.model.variables else None
        return self._deferred[id(variable)]


@contextlib.contextmanager
def model_fn_call(model):
    """Makes a fresh ModelFnCall the one variable creation sees."""
    call = ModelFnCall(model)
    token = _ACTIVE_CALL.set(call)
    try:
        with keras_internals.fresh_object_names():
            yield call
    finally:
        _ACTIVE_CALL.reset(token)


def served_variable(variable):
    """The served Keras variable that `variable`, a deferred one a layer of this model_fn call made in a
    train tower, stands for (what an optimizer model_fn made must update); otherwise `variable` itself."""
    call = _ACTIVE_CALL.get()
    if call is None or getattr(variable, "_value", True) is not None:
        return variable
    key = call.match_deferred(variable)
    return variable if key is None else call.model.keras_variable(key)


class TowerStateScope(keras.StatelessScope):
    """A StatelessScope that also knows the variables model_fn's layers create
    inside it: reads of such a (deferred) variable get the served variable's
    value, or its value in the state mapping; its updates are filed under the
    served variable's Keras wrapper, where the tower step looks for them."""

    def __init__(self, state_mapping=None):
        super().__init__(state_mapping, initialize_variables=False)
        self._made_here = []

    def _served(self, variable) -> Optional[object]:
        if _ACTIVE_CALL.get() is None or getattr(variable, "_value", True) is not None:
            return None
        self._made_here.append(variable)
        served = served_variable(variable)
        return None if served is variable else served

    def new_value(self, variable):
        """The value the scope holds for `variable` (given in the state mapping,
        or assigned inside the scope), or None."""
        return super().get_current_value(variable)

    def get_current_value(self, variable):
        """What Keras reads for `variable` here: its mapped or updated value; for a
        deferred variable model_fn created, its served variable's; otherwise the
        variable itself (Keras asks for regularization losses, among others)."""
        value = self.new_value(variable)
        if value is not None:
            return value
        served = self._served(variable)
        if served is not None:
            value = self.new_value(served)
            return served.value if value is None else value
        return getattr(variable, "_value", None)

    def add_update(self, update):
        variable, value = update
        served = self._served(variable)
        super().add_update((variable if served is None else served, value))

    def __exit__(self, *args, **kwargs):
        super().__exit__(*args, **kwargs)
        keras_internals.forget_uninitialized(self._made_here)
