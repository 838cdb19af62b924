"""The one place Keras 3's private state is read or set.

Keras's public API has no way to (a) give layers default names that do not
depend on what was built before in the process (short of clear_session,
which drops everything), (b) see the name-scope stack a variable is created
under (the path it will get, and whether a metric is creating it), (c) make
a variable inside a StatelessScope without its being deferred, (d) drop
the deferred variables a StatelessScope leaves waiting for initialization,
(e) tell a deferred variable's late initialization (outside its layer's name
scope) from a new variable, (f) make an optimizer inside a StatelessScope,
(g) reach the variable that holds an optimizer's learning rate, (h) tell
a model's symbolic first call (its output shapes, traced in a scratch graph
that is then dropped) from its real one, or (i) make its variables hash and
compare by identity while TF1 code runs (common.tf1_runtime.tf1_graph).
Each is done here, on keras.src.backend.common.global_state (and (g) on the
optimizer's `_learning_rate`), each private name read through
common.internals.versions: a Keras that moves one fails at this module's
import, in one line naming the name and the version; what replaces a Keras
attribute does so only while a model_fn call runs
(common.internals.scoped_patches).
"""

import collections
import contextlib
import contextvars
import functools

import keras
from common.internals import versions
from common.internals.scoped_patches import ScopedPatch, all_active

_KERAS = "Keras"
_GLOBAL_STATE = versions.private_module("keras.src.backend.common.global_state", _KERAS)
_get = versions.private(_GLOBAL_STATE, "get_global_attribute", _KERAS)  # Keras's per-thread global state
_set = versions.private(_GLOBAL_STATE, "set_global_attribute", _KERAS)
_TF_VARIABLE = versions.private(versions.private_module("keras.src.backend.tensorflow.core", _KERAS), "Variable",
                                _KERAS)
_OPTIMIZERS = versions.private_module("keras.src.optimizers", _KERAS)
_BASE_OPTIMIZER = next((cls for cls in keras.optimizers.Optimizer.__mro__ if cls.__name__ == "BaseOptimizer"), None)
if _BASE_OPTIMIZER is None:
    versions.private(keras.optimizers.Optimizer, "BaseOptimizer", _KERAS)  # (raises, naming it)


@contextlib.contextmanager
def fresh_object_names():
    """Layers made inside get default names as in a new process ("dense", not "dense_7")."""
    saved = _get("object_name_uids")
    _set("object_name_uids", collections.defaultdict(int))
    try:
        yield
    finally:
        _set("object_name_uids", saved)


_IDENTITY = {"__eq__": lambda self, other: self is other, "__ne__": lambda self, other: self is not other,
             "__hash__": object.__hash__}


_BY_IDENTITY = [ScopedPatch(keras.Variable, name, method) for name, method in _IDENTITY.items()]


def variables_by_identity():
    """A context in which Keras variables hash and compare by identity, as TF1 code treats variables (the TPU
    models' `list(set(tf.trainable_variables() + ...))`), where Keras 3's compare element-wise and do not hash."""
    return all_active(_BY_IDENTITY)


def in_symbolic_call():
    """Whether Keras is tracing a call for its output shapes (compute_output_spec's scratch graph)."""
    return _get("symbolic_scope") is not None


def name_scope_stack():
    """The Keras name scopes open now, outermost first (each has .name, .caller, .override_parent)."""
    return _get("name_scope_stack") or []


@contextlib.contextmanager
def keeping_name_scope_stack():
    """Keras's name scopes as they were, after a trace that failed: a Keras name scope whose tf.name_scope refused
    its name (a leading "_" at the root) stays on Keras's stack, and would prefix every variable made later."""
    before = _get("name_scope_stack")
    before = None if before is None else list(before)
    try:
        yield
    finally:
        _set("name_scope_stack", before)


@contextlib.contextmanager
def outside_stateless_scope():
    """Variables made inside are made now, not deferred by an enclosing StatelessScope."""
    stateless = _get("stateless_scope")
    _set("stateless_scope", None)
    try:
        yield
    finally:
        _set("stateless_scope", stateless)


def forget_uninitialized(variables):
    """Drops `variables` from the deferred variables Keras waits to initialize."""
    made = {id(v) for v in variables}
    waiting = _get("uninitialized_variables") or []
    _set("uninitialized_variables", [v for v in waiting if id(v) not in made])


def _optimizers_made_outside_stateless_scopes():
    """Keras cannot make an optimizer inside a StatelessScope (its iteration counter has a value, not a
    callable, as initializer: "You are attempting to create a variable while in a stateless scope"), and a
    train tower runs model_fn in one; TF 2.x model_fns make their optimizer there. So, in model_fn, every
    optimizer is constructed outside the scope (nothing of an optimizer's construction is a tower's state)."""
    construct = _BASE_OPTIMIZER.__init__

    def __init__(self, *args, **kwargs):
        with outside_stateless_scope():
            construct(self, *args, **kwargs)
    return ScopedPatch(_BASE_OPTIMIZER, "__init__", functools.wraps(construct)(__init__))


_INITIALIZING_PATH = contextvars.ContextVar("common_keras_initializing_path", default=None)


def initializing_path():
    """The path of the deferred Keras variable being initialized now, or None."""
    return _INITIALIZING_PATH.get()


def _deferred_initializations_named():
    """A subclassed model's first call builds its layers inside a StatelessScope (Keras traces the call for
    output shapes) and Keras makes their variables when that scope exits, outside the layers' name scopes:
    the name scope then says "net/kernel" where the variable's path is "net/dense/kernel". So, in model_fn,
    the path is announced while Keras makes it."""
    initialize = versions.private(_TF_VARIABLE, "_deferred_initialize", _KERAS)

    def _deferred_initialize(self):
        token = _INITIALIZING_PATH.set(self.path)
        try:
            initialize(self)
        finally:
            _INITIALIZING_PATH.reset(token)
    return ScopedPatch(_TF_VARIABLE, "_deferred_initialize", functools.wraps(initialize)(_deferred_initialize))


_MODEL_FN_PATCHES = [_optimizers_made_outside_stateless_scopes(), _deferred_initializations_named()]


def in_model_fn():
    """A context for a call of model_fn: a Keras optimizer is made outside the tower's StatelessScope, and a
    deferred variable's path is announced as Keras makes it (the two functions above)."""
    return all_active(_MODEL_FN_PATCHES)


def accept_in_compile(kind, wrap):
    """Makes Keras's compile() take an optimizer of `kind` (a class), wrapped by `wrap`, as Keras 2's took a
    TF1 optimizer (wrapping it in its TFOptimizer). compile() reads keras.src.optimizers.get at each call;
    Keras's public API has no registry of optimizer kinds to add one to."""
    plain_get = versions.private(_OPTIMIZERS, "get", _KERAS)

    def get(identifier):
        return wrap(identifier) if isinstance(identifier, kind) else plain_get(identifier)
    _OPTIMIZERS.get = get


def learning_rate_variable(optimizer):
    """The Keras variable that holds `optimizer`'s learning rate, or None where a schedule or callable
    computes it (Keras has no public accessor: `optimizer.learning_rate` reads it)."""
    rate = getattr(optimizer, "_learning_rate", None)
    return rate if isinstance(rate, keras.Variable) else None
