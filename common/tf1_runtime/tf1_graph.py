"""TF1's graph surface inside model_fn: each call of model_fn sees a fresh TF1 graph.

tf.estimator called model_fn once in a new graph, and TF1 code relied on what
a fresh graph gives: variable scopes numbered from nothing
(`variable_scope(default_name="bert")` is "bert", not "bert_1"), empty
collections (trainable variables, regularization losses, update ops,
summaries), a variable store that refuses one name twice unless asked to
reuse it, and the global step in its collection. Here model_fn is traced once
per tower, mode and retrace, in tf.function graphs that share those
collections with the whole process. `fresh_graph()` gives each call its own;
`model_graph()` gives a TF1 hook the variable collections the call left.

`Tf1VariableStore` is tf.compat.v1.get_variable's store for one call, with
TF1's rules (reuse, AUTO_REUSE, default initializers by dtype, regularizers
into REGULARIZATION_LOSSES, custom getters; a partitioner splits the variable
over a parameter-server job's ps tasks, and elsewhere it is made whole, which
is how a TF1 checkpoint holds it: common.tf1_runtime.partitioned).
It makes each variable with tf.Variable under the full name TF1 gives it
("bert/encoder/layer_0/attention/self/query/kernel"), announced by
`creating(name)`: the registry's variable creator keys the variable by that
name, serves it to every later call, and checkpoints it under it.

TensorFlow's public API cannot install a variable store or name the
collections the store and the scope counts live in, nor make tensors compare
by identity for a while, nor give an eager variable the `op` TF1 code reads
its name from (`var.op.name`, where TensorFlow raises): those private names
are common.internals.tensorflow_internals', the last two set only while a
call of model_fn or a TF1 hook's method runs.
"""

import contextlib
import contextvars
import dataclasses
from typing import Optional

import tensorflow as tf

from common.internals import keras_internals, tensorflow_internals
from common.tf1_runtime import caller, partitioned

GraphKeys = tf.compat.v1.GraphKeys
# What a fresh TF1 graph held nothing of; the first two are TF1's variable store and scope counts.
FRESH_COLLECTIONS = (tensorflow_internals.VARSTORE_KEY, tensorflow_internals.VARSCOPESTORE_KEY,
                     GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
                     GraphKeys.MODEL_VARIABLES, GraphKeys.METRIC_VARIABLES, GraphKeys.REGULARIZATION_LOSSES,
                     GraphKeys.UPDATE_OPS, GraphKeys.SUMMARIES, GraphKeys.LOSSES, GraphKeys.GLOBAL_STEP,
                     GraphKeys.MOVING_AVERAGE_VARIABLES)

# The collections of variables a TF1 graph held when model_fn had run (model_graph gives hooks them).
VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.MODEL_VARIABLES,
                        GraphKeys.MOVING_AVERAGE_VARIABLES)

_CREATING = contextvars.ContextVar("common_tf1_variable_being_created", default=None)


@dataclasses.dataclass(frozen=True)
class Tf1Variable:
    """What the store is creating: its full TF1 name, and whether it is optimizer state (a slot)."""

    name: str
    optimizer_state: bool = False
    device: Optional[str] = None  # where it must live (a slot: its variable's device), else the plan decides


def creating():
    """The Tf1Variable the store is creating now, or None (a variable made otherwise)."""
    return _CREATING.get()


@contextlib.contextmanager
def creating_variable(name, optimizer_state=False, device=None):
    token = _CREATING.set(Tf1Variable(name, optimizer_state, device))
    try:
        yield
    finally:
        _CREATING.reset(token)


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return tf.compat.v1.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == tf.string:
        return tf.compat.v1.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


class Tf1VariableStore:
    """tf.compat.v1.get_variable's store for one model_fn call (see the module)."""

    def __init__(self, made=None):
        self.variables = {}  # full name -> variable, made or served in this call
        self._made = made if made is not None else {}  # full name -> variable, made by an earlier call
        self._non_slot_owners = {}  # an optimizer's non-slot variable name -> the optimizers of this call making one
        self._entry_scope = tf.compat.v1.get_default_graph().get_name_scope()  # (a tower's, where model_fn starts)

    def scope_here(self):
        """The name scope open now, as model_fn opened it (without the tower's around model_fn)."""
        return scope_within(self._entry_scope)

    def non_slot_name(self, name, optimizer):
        """TF1's name of `optimizer`'s non-slot variable `name` (Adam's beta1_power): the second optimizer of this
        call to make one gets name_1, as TF1's graph made the names unique (a GAN's two Adams keep a count each)."""
        owners = self._non_slot_owners.setdefault(name, [])
        if not any(owner is optimizer for owner in owners):
            owners.append(optimizer)
        index = next(i for i, owner in enumerate(owners) if owner is optimizer)
        return name if index == 0 else f"{name}_{index}"

    def get_variable(self, name, shape=None, dtype=tf.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=tf.VariableSynchronization.AUTO, aggregation=tf.VariableAggregation.NONE):
        """What VariableScope.get_variable asks of a store (the scope has resolved its defaults). A name ending
        in "/" (the scope's own: an ExponentialMovingAverage's "<variable>/ExponentialMovingAverage/") names
        the variable without it, as a TF1 graph named its op."""
        del caching_device, use_resource  # (resource variables, wherever the plan puts them)
        name = name[:-1] if name.endswith("/") else name

        def true_getter(name, shape=None, dtype=tf.float32, initializer=None, regularizer=None, reuse=None,
                        trainable=None, collections=None, validate_shape=True, constraint=None,
                        synchronization=tf.VariableSynchronization.AUTO, aggregation=tf.VariableAggregation.NONE,
                        partitioner=None, **unused):
            single = (dtype, initializer, regularizer, reuse, trainable, collections, validate_shape, constraint,
                      synchronization, aggregation)
            partitions = partitioned.sharding_partitions(partitioner, name, shape, dtype)
            if partitions is None and partitioner is not None:  # made in parts by an earlier call: served so
                partitions = partitioned.partitions_made(name, shape, self._made)
            if partitions is None or name in self.variables:
                return self._get_single(name, shape, *single)
            return self._get_partitioned(name, shape, partitions, *single)

        arguments = dict(name=name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                         reuse=reuse, trainable=trainable, collections=collections, validate_shape=validate_shape,
                         constraint=constraint, synchronization=synchronization, aggregation=aggregation,
                         partitioner=partitioner)
        if custom_getter is not None:
            return custom_getter(getter=true_getter, **arguments, caching_device=None, use_resource=True)
        return true_getter(**arguments)

    def _get_partitioned(self, name, shape, partitions, dtype, initializer, *single):
        """A PartitionedVariable of parts "<name>/part_<i>", each recording its slice of the whole (see
        common.tf1_runtime.partitioned)."""
        dtype = tf.as_dtype(dtype or tf.float32).base_dtype
        shape = tf.TensorShape(shape)
        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if isinstance(initializer, type):
            initializer = initializer(dtype=dtype)
        parts = []
        for i, (offset, part_shape) in enumerate(partitioned.slices(shape, partitions)):
            part = self._get_single(f"{name}/part_{i}", tf.TensorShape(part_shape), dtype,
                                    partitioned.part_initializer(initializer, shape, offset, part_shape), *single)
            partitioned.mark_part(part, name, shape, offset)
            parts.append(part)
        self.variables[name] = partitioned.PartitionedVariable(name, shape, dtype, parts, partitions)
        return self.variables[name]

    def _get_single(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                    validate_shape, constraint, synchronization, aggregation):
        dtype = tf.as_dtype(dtype or tf.float32).base_dtype
        shape = None if shape is None else tf.TensorShape(shape)
        if name in self.variables:
            return self._reused(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you "
                             "mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if isinstance(initializer, type):
            initializer = initializer(dtype=dtype)
        if callable(initializer):
            if shape is None or not shape.is_fully_defined():
                raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead was {shape}.")
            dims = shape.as_list()
            initial_value = lambda: initializer(dims, dtype=dtype)  # noqa: E731  (called once, where it is placed)
        else:
            initial_value = initializer
        if trainable is None:
            trainable = synchronization != tf.VariableSynchronization.ON_READ
        with creating_variable(name):
            variable = tf.Variable(initial_value, name=name, trainable=trainable, dtype=dtype,
                                   validate_shape=validate_shape, constraint=constraint,
                                   synchronization=synchronization, aggregation=aggregation)
        self.variables[name] = variable
        self._collect(variable, collections, trainable, regularizer, name)
        return variable

    def _reused(self, name, shape, dtype, reuse):
        if reuse is False:
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?")
        found = self.variables[name]
        if shape is not None and not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and found shape "
                             f"{found.shape}.")
        if dtype != found.dtype.base_dtype:
            raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found dtype "
                             f"{found.dtype.base_dtype.name}.")
        return found

    @staticmethod
    def _collect(variable, collections, trainable, regularizer, name):
        """Files the variable in its collections, and its regularization loss, as TF1's store did."""
        collections = list(collections or [GraphKeys.GLOBAL_VARIABLES])
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        for key in collections:
            _add_once(key, variable)
        if regularizer is not None:
            with tf.name_scope(name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                tf.compat.v1.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)


@contextlib.contextmanager
def fresh_graph(global_step, made=None):
    """While entered, the default graph's TF1 state is a fresh graph's: empty
    collections and scope counts, a Tf1VariableStore (yielded), and
    `global_step` in the GLOBAL_STEP collection (so tf.compat.v1.train's
    get_global_step finds it under any import alias). Tensors and variables
    compare and hash by identity, as in tf.estimator's graph: TF1 code keys
    dicts by variable (the official CIFAR-10 example's
    `all_grads.setdefault(var, [])`) and filters with `v not in [prior]`,
    which TF 2's element-wise == and unhashable tensors inside a tf.function
    would break."""
    store = Tf1VariableStore(made)
    held = {tensorflow_internals.VARSTORE_KEY: [store],
            GraphKeys.GLOBAL_STEP: [] if global_step is None else [global_step]}
    with _collections_holding(tf.compat.v1.get_default_graph(), FRESH_COLLECTIONS, held):
        yield store


@contextlib.contextmanager
def model_graph(collections, global_step):
    """While entered, the default graph's variable collections hold the model's, as model_fn's call left
    them (`collections`: key -> variables; CallRecord.collections), and the global step: what a TF1 hook's
    begin() found in tf.estimator's graph (ExponentialMovingAverage.variables_to_restore(), slim's
    get_variables_to_restore() read them there)."""
    held = {key: list(collections.get(key, ())) for key in VARIABLE_COLLECTIONS}
    if global_step is not None:
        held[GraphKeys.GLOBAL_STEP] = [global_step]
        if not any(v is global_step for v in held[GraphKeys.GLOBAL_VARIABLES]):  # (a TF1 graph's global variable)
            held[GraphKeys.GLOBAL_VARIABLES].append(global_step)
    with _collections_holding(tf.compat.v1.get_default_graph(), tuple(held) + (GraphKeys.GLOBAL_STEP,), held):
        yield


@contextlib.contextmanager
def _collections_holding(graph, keys, held):
    """While entered, `graph`'s collections `keys` hold `held`'s lists (empty where it has none), and tensors
    and variables (Keras's too) compare and hash by identity, and variables have an op, as
    TF1 code keys, filters and names them."""
    saved = {key: list(graph.get_collection(key)) for key in keys}
    for key in keys:
        graph.clear_collection(key)
        graph.get_collection_ref(key).extend(held.get(key, ()))
    try:
        with tensorflow_internals.tensors_by_identity(), keras_internals.variables_by_identity(), \
                tensorflow_internals.variable_ops():
            yield
    finally:
        for key in keys:
            graph.clear_collection(key)
            graph.get_collection_ref(key).extend(saved[key])


def variable_name(variable):
    """A variable's TF1 op name ("dense/kernel"): what TF1 code read as var.op.name (for a Keras layer's
    variable, its path)."""
    running = caller.current()
    name = running.name_of(variable) if running is not None else None
    return name or variable.name.split(":")[0]


def scope_within(entry):
    """The default graph's name scope open now, below `entry` (the scope model_fn was called in: a tower's); ""
    where it is not below it."""
    scope = tf.compat.v1.get_default_graph().get_name_scope()
    if not entry:
        return scope
    return scope[len(entry) + 1:] if scope.startswith(entry + "/") else ""


def active_store():
    """The Tf1VariableStore of the model_fn call running now (get_variable's), or None."""
    found = tf.compat.v1.get_collection(tensorflow_internals.VARSTORE_KEY)
    return found[0] if found and isinstance(found[0], Tf1VariableStore) else None


def _add_once(key, variable, graph=None):
    """Adds to a collection of `graph` (default: the default graph) unless there (a graph-mode tf.Variable
    files itself)."""
    graph = graph or tf.compat.v1.get_default_graph()
    if not any(item is variable for item in graph.get_collection(key)):
        graph.add_to_collection(key, variable)


def tf_variable(variable):
    """The tf.Variable behind a Keras variable (or the variable itself): what TF1's update kernels take."""
    inner = getattr(variable, "value", variable)
    return inner if isinstance(inner, tf.Variable) else variable


def collect(variable, graph):
    """Files a variable model_fn made otherwise (a Keras layer's, as its tf.Variable; an ExponentialMovingAverage's,
    made lifted out of the trace) in the collections of `graph`, the call's, as a TF1 graph held every variable
    (so tf.compat.v1.trainable_variables() lists it)."""
    variable = tf_variable(variable)
    _add_once(GraphKeys.GLOBAL_VARIABLES, variable, graph)
    if variable.trainable:
        _add_once(GraphKeys.TRAINABLE_VARIABLES, variable, graph)


