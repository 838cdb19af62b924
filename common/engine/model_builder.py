"""Calls model_fn, builds its variables once, and owns them.

The first probe (a trace of model_fn on one tower, with variable creation
allowed and every variable placed by the device plan, common.devices.placement)
creates the model; a probe of each later mode only reads the spec. Every
other call of model_fn (each tower of each step, eval, predict, export)
must not create variables. What the probes learn (the spec's names, its
hooks, the optimizer of the TRAIN spec) is returned and kept here, not
stashed by the calls themselves.
"""

import contextlib
import dataclasses
import inspect
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import keras
import numpy as np
import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import placement
from common.engine import inputs
from common.engine.step import TrainVariables
from common.hooks import protocol
from common.spec import metrics
from common.spec.model_fn import EstimatorSpec, ModeKeys, call_with_wanted_args, check_spec
from common.state import checkpoints, vocabularies
from common.variables.call_record import CallRecord
from common.variables.registry import ModelRegistry


class ModelFnOutputs(NamedTuple):
    """One call of model_fn: its checked spec, and what it recorded (common.variables.call_record)."""

    spec: EstimatorSpec
    record: CallRecord


@dataclasses.dataclass(frozen=True)
class ProbeInfo:
    """What one mode's spec offers the loops: names, metric results, hooks."""

    scalars: Tuple[str, ...]
    metric_results: Dict[str, Callable]
    totals: Tuple[str, ...]
    predictions_dict: bool
    hooks: tuple
    chief_hooks: tuple  # TRAIN: the spec's training_chief_hooks, for the chief to run
    keras_metrics: tuple  # Keras metric objects: their state is reset before each evaluation
    export_outputs: Optional[Dict[str, type]]  # signature key -> ExportOutput class (PREDICT)
    graph_tensors: frozenset  # names of the ops in model_fn's graph, which hooks may ask for by name
    learning_rate: bool  # whether a train step can report the learning rate
    summary_tensors: Tuple[str, ...]  # TF1 summary ops model_fn made (images, histograms, ...): their tensors' names
    scaffold: object  # the spec's Scaffold, or None
    checkpoint_inits: tuple  # CheckpointInits: how a new model starts (init_from_checkpoint)
    metric_variables: tuple  # every metric's state model_fn made, in eval_metric_ops or not
    updates_itself: bool  # TRAIN: model_fn's train_op updates variables itself (its own optimizer, TF1 assigns)
    tf1_collections: dict  # model_fn's TF1 variable collections as its call left them (hooks' begin sees them)
    counts_steps_itself: bool = False  # TRAIN: model_fn's train_op writes the global step (BERT's: assign(step + 1))

    @classmethod
    def from_outputs(cls, outputs, mode, graph, metric_variables=()):
        """The names offered are model_fn's own (a whole step's graph holds them under the first tower's scope:
        hooks ask for tensors by the names model_fn gave them)."""
        spec, record = outputs

        hooks = {ModeKeys.TRAIN: spec.training_hooks, ModeKeys.EVAL: spec.evaluation_hooks,
                 ModeKeys.PREDICT: spec.prediction_hooks}[mode]
        learning_rate = spec.learning_rate is not None or spec.optimizer is not None or any(
            update.learning_rate is not None for update in record.updates[:1])
        return cls(
            scalars=tuple(spec.scalars),
            metric_results={name: metrics.result_fn(m) for name, m in spec.eval_metric_ops.items()},
            totals=("count", "batch_loss_sum", "batches") + tuple(
                f"{name}/{part}" for name, m in spec.eval_metric_ops.items() for part in metrics.totals_of(m)),
            predictions_dict=isinstance(spec.predictions, dict),
            hooks=tuple(hooks),
            chief_hooks=spec.training_chief_hooks if mode == ModeKeys.TRAIN else (),
            keras_metrics=tuple(m for m in map(metrics.stateful, spec.eval_metric_ops.values()) if m is not None),
            export_outputs=None if spec.export_outputs is None else {
                key: type(output) for key, output in spec.export_outputs.items()},
            graph_tensors=frozenset(protocol.unscoped(op.name) for op in graph.get_operations()),
            learning_rate=learning_rate, summary_tensors=tuple(
                protocol.unscoped(t.name) for t in record.summaries if t.dtype == tf.string), scaffold=spec.scaffold,
            checkpoint_inits=tuple(record.checkpoint_inits), metric_variables=tuple(metric_variables),
            updates_itself=bool(record.updates or record.assigns), tf1_collections=dict(record.collections),
            counts_steps_itself=record.writes_global_step)

    def reset_metrics(self):
        """Before each evaluation: the spec's Keras metrics reset as Keras resets them, and every other metric
        state zeroed (the pairs a TF1 value was derived from), as TF1 initialized all its metric variables."""
        for metric in self.keras_metrics:
            metric.reset_state()
        reset = {id(getattr(variable, "value", variable))  # (a Keras variable wraps the tf.Variable)
                 for metric in self.keras_metrics for variable in metric.variables}
        for variable in self.metric_variables:
            if id(variable) not in reset:
                variable.assign(tf.zeros_like(variable))


_ASSIGNS = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")


def _assigned(ops, variable, graph):
    """Whether one of `ops` (made in `graph`) assigns `variable`, captured from outside it."""
    captured = {id(inner) for outer, inner in graph.captures if outer is variable.handle}
    return any(op.type in _ASSIGNS and id(op.inputs[0]) in captured for op in ops)


@dataclasses.dataclass
class _FirstCall:
    """What a probe's trace learns from its first call of model_fn (the towers after it only read the model)."""

    building: bool  # that call builds the model
    outputs: Optional[ModelFnOutputs] = None


def _step_view(device):
    with tf.init_scope(), tf.device(device):
        return tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")


def _set_random_seed(seed):
    """keras.utils.set_random_seed (TensorFlow's, Python's, NumPy's and Keras's seeds), also where the program
    rebound np.random.seed to a number (TF1 notebooks did, by mistake; TF1 seeded only its graph)."""
    rebound = np.random.seed
    if not callable(rebound):
        np.random.seed = np.random.mtrand.seed
    try:
        keras.utils.set_random_seed(seed)
    finally:
        np.random.seed = rebound


class ModelBuilder:
    """model_fn, its registry of modules and variables, and the optimizer's variables.

    frozen: a compiled regex (re.match) of variable names not to train.
    """

    def __init__(self, model_fn, params, config, frozen=None):
        if "features" not in inspect.signature(model_fn).parameters:
            raise ValueError("model_fn must take an argument named 'features'")
        self._model_fn = model_fn
        self._params = params
        self._config = config
        self._plan = config.device_plan
        self._frozen = frozen
        self.registry = None
        self._balancer = None
        self._probes = {}
        self._first_call = None  # the _FirstCall of the probe being traced
        self.vocabulary_files = set()  # the vocabulary files model_fn's lookup tables read (state.vocabularies)
        self.model_variables = []  # TrackedVariable, in creation order
        self.train_variables = None  # TrainVariables, after the TRAIN probe
        # What a train tower's model_fn reads the global step from, one per tower device: set to the step before
        # the tower runs, it absorbs what TF1 code writes to it (its train_op counted the steps: the framework does).
        self.step_views = [_step_view(device) for device in self._plan.tower_devices]

    @property
    def built(self):
        return self.registry is not None

    @property
    def first_tower_device(self):
        return self._plan.tower_devices[0]

    @property
    def global_step(self):
        return self.registry.global_step

    @property
    def variable_placement(self):
        """(name, bytes, device) of each variable spread over several devices."""
        return list(self._balancer.assignments) if self._balancer else []

    def scope(self):
        """The registry's scope, for running code that may trace model_fn."""
        return self.registry.model_fn_scope(calling=False)

    def call(self, features, labels, mode, global_step=None):
        """ModelFnOutputs of model_fn for one tower; `global_step` is what model_fn reads the step from (a train
        tower's view of it). The first call of a probe's trace is recorded for it, and builds the model (allows
        and places new variables) when none is built."""
        first_call = self._first_call if self._first_call is not None and self._first_call.outputs is None else None
        building = first_call is not None and first_call.building
        optional = {"labels": labels, "mode": mode, "params": self._params, "config": self._config}
        creator = placement.placing_creator(self._plan.variable_devices, self._balancer) if building else None
        inputs.seen_by_model_fn(features)
        if first_call is not None:  # (tf.estimator's lines, once for each graph it built: here, each probe)
            logging.info("Calling model_fn.")
        graph = tf.compat.v1.get_default_graph()
        made_before = len(graph.get_operations())
        with self.registry.model_fn_scope(building, creator, global_step, deferring=True) as record:
            spec = call_with_wanted_args(self._model_fn, {"features": features}, optional)
        record.writes_global_step = global_step is not None and _assigned(
            graph.get_operations()[made_before:], global_step, graph)  # (BERT's train_op: assign(step + 1))
        if first_call is not None:
            logging.info("Done calling model_fn.")
        check_spec(spec, mode)
        if mode == ModeKeys.TRAIN and spec.optimizer is None and not record.updates:
            raise ValueError(
                "model_fn's train_op updates nothing the framework can average over towers: return the "
                "minimize(loss) or apply_gradients(...) of a tf.compat.v1.train optimizer (python -m common.upgrade "
                "maps them), of a Keras optimizer made in model_fn, or give EstimatorSpec(optimizer=...)")
        outputs = ModelFnOutputs(spec, record)
        if first_call is not None:
            first_call.outputs = outputs
        return outputs

    def apply(self, updates, grads, global_step):
        """Does the deferred updates with the gradients given (one list per update,
        aligned with its pairs), in a scope where the optimizer state they make
        is created (the TRAIN probe) or served (every step); returns the ops."""
        with self.registry.model_fn_scope(global_step=global_step, applying=True):
            return [update.apply(list(zip(update_grads, [v for _, v in update.grads_and_vars])))
                    for update, update_grads in zip(updates, grads)]

    def after_update(self, record):
        """Does what model_fn made to follow the optimizer's update (record.after_update: an
        ExponentialMovingAverage's apply), once, after the step is counted: the first tower's view of the global
        step reads the new step, as TF1's train_op had counted it."""
        if record is None or not record.after_update:
            return
        view = self.step_views[0]
        view.assign(self.registry.global_step)
        with self.registry.model_fn_scope(global_step=view, applying=True):
            for action in record.after_update:
                action()

    def probe(self, mode, input_signature, make_inputs):
        """Traces model_fn once on one tower (building the model on the first
        probe) and returns the mode's ProbeInfo."""
        if mode in self._probes:
            return self._probes[mode]

        def trace(*args):
            features, labels = make_inputs(*args)
            step = self.step_views[0] if mode == ModeKeys.TRAIN else None
            with tf.device(self.first_tower_device):
                outputs = self.call(features, labels, mode, step)
                if mode == ModeKeys.TRAIN:  # the optimizers' state is made here, on the tower's own gradients
                    updates = outputs.record.updates
                    self.apply(updates, [[g for g, _ in u.grads_and_vars] for u in updates], step)
                    self.after_update(outputs.record)

        traced, outputs = self._traced(tf.function(trace, autograph=False), input_signature)
        if mode == ModeKeys.TRAIN:
            self._refuse_untracked(traced.trainable_variables)
        info = ProbeInfo.from_outputs(outputs, mode, traced.graph, self.registry.metric_state.variables.values())
        if mode == ModeKeys.TRAIN:
            self._build_optimizer(outputs.spec.optimizer)
        self._probes[mode] = info
        return info

    def probe_step(self, mode, step_function, signature):
        """The mode's ProbeInfo, learnt by tracing step_function (a tf.function of the mode's whole step over the
        towers, which the mode's loop then calls) on `signature`: model_fn is traced once for the probe and the
        loop together. A train step's first tower builds the optimizer (finish_train_build) when the probe
        builds the model; names in the step's graph are read without the first tower's scope."""
        if mode not in self._probes:
            traced, outputs = self._traced(step_function, signature, in_scope=True)
            if mode == ModeKeys.TRAIN:
                self._refuse_untracked(traced.trainable_variables)
            self._probes[mode] = ProbeInfo.from_outputs(outputs, mode, traced.graph,
                                                        self.registry.metric_state.variables.values())
        return self._probes[mode]

    def finish_train_build(self, optimizer):
        """The TrainVariables, built (with the optimizer's state) by the first train tower of a step that is
        the TRAIN probe, right after its call of model_fn built the model."""
        if self.train_variables is None:
            self.model_variables = self.registry.tracked_variables()
            with self.registry.making_optimizer():  # (its state made outside the trace, as the model's is)
                self._build_optimizer(optimizer)
        return self.train_variables

    def _traced(self, function, signature, in_scope=False):
        """(function's concrete function on `signature`, the ModelFnOutputs of its first call of model_fn),
        that call building the model when none is built yet; in_scope: traced in the registry's scope, as a
        loop is."""
        first = not self.built
        if first:
            if self._config.tf_random_seed is not None:
                _set_random_seed(self._config.tf_random_seed)
            self.registry = ModelRegistry(self._plan.consolidation_device)
            if len(self._plan.variable_devices) > 1:
                self._balancer = placement.GreedyLoadBalancer(self._plan.variable_devices)
        self._first_call = _FirstCall(building=first)
        try:
            with self.scope() if in_scope else contextlib.nullcontext(), vocabularies.collecting(self.vocabulary_files):
                traced = function.get_concrete_function(*signature)
        finally:
            recorded, self._first_call = self._first_call, None
            if first:
                self.model_variables = self.registry.tracked_variables()
                self._log_placement()
        return traced, recorded.outputs

    def probe_dataset(self, mode, dataset, step_function=None):
        """probe() with the signature of a dataset's elements, one tower's share; or, given the mode's
        step_function, probe_step() with the dataset's whole element."""
        if step_function is not None:
            with inputs.naming_bad_inputs(dataset.element_spec):
                return self.probe_step(mode, step_function, (inputs.element_signature(dataset),))
        signature = inputs.shard_signature(dataset)
        with inputs.naming_bad_inputs(signature):
            if mode == ModeKeys.PREDICT:
                return self.probe(mode, (signature,), lambda features: (features, None))
            return self.probe(mode, signature, lambda features, labels: (features, labels))

    def _refuse_untracked(self, read_variables):
        """ValueError naming each trainable variable model_fn reads that no module,
        served store or optimizer holds (one made outside model_fn): nothing would
        train it or save it, silently."""
        tracked = {t.variable.handle.ref() for t in self.model_variables}  # (by handle: a strategy's variable
        untracked = [v.name for v in read_variables if v.handle.ref() not in tracked]  # wraps the one a trace reads)
        if untracked:
            raise ValueError(
                f"model_fn reads the trainable variable{'s' if len(untracked) > 1 else ''} {', '.join(untracked)}, "
                "made outside model_fn: no optimizer would train it and no checkpoint would hold it. Create it "
                "inside model_fn (or in a common.get_module factory), or make it trainable=False")

    def _log_placement(self):
        if not self._balancer:
            return
        for device, load in zip(self._balancer.devices, self._balancer.loads):
            count = sum(1 for _, _, d in self._balancer.assignments if d == device)
            logging.info("Variables on %s: %d, %.2f MB", device, count, load / 2**20)

    def _build_optimizer(self, optimizer):
        trainable, frozen = [], []
        for tracked in self.model_variables:
            if tracked.trainable:
                held = self._frozen is not None and self._frozen.match(tracked.name)
                (frozen if held else trainable).append(tracked)
        if frozen:
            logging.info("Freezing %d variable(s) matching %r", len(frozen), self._frozen.pattern)
        stateful = [t for t in self.model_variables if not t.trainable and t.keras_variable is not None]
        if optimizer is not None:
            with tf.device(self._plan.consolidation_device):
                optimizer.build([t.api_variable for t in trainable])
        self.train_variables = TrainVariables(trainable, frozen, stateful, optimizer, self.registry.global_step)

    def metric_state_names(self):
        """The names of the metric state model_fn made, as checkpoints of this project's earlier versions, which
        saved TF1's local variables as the model's, held it (its own name, or under model_fn/)."""
        names = set(self.registry.metric_state.variables) if self.built else set()
        return names | {f"{checkpoints.MODEL_FN_SCOPE}/{name}" for name in names}

    def named_state(self, with_optimizer):
        """name -> variable of the checkpointed state ({} before the model is built)."""
        if not self.built:
            return {}
        optimizer = self.train_variables.optimizer if with_optimizer and self.train_variables else None
        made_in_model_fn = self.registry.optimizer_state_variables() if with_optimizer else {}
        return checkpoints.named_state(self.registry.global_step, self.model_variables, optimizer, made_in_model_fn)

    def optimizer_state_names(self):
        """The names in named_state(with_optimizer=True) that are optimizer state."""
        model = {t.name for t in self.model_variables} | {checkpoints.GLOBAL_STEP}
        return [name for name in self.named_state(with_optimizer=True) if name not in model]

    def probe_info(self, mode):
        """The mode's ProbeInfo, or None before its probe."""
        return self._probes.get(mode)

    def scaffold_checkpoint(self):
        """The tf.train.Checkpoint the TRAIN spec's Scaffold names as its saver, or None."""
        info = self.probe_info(ModeKeys.TRAIN)
        saver = getattr(info.scaffold, "saver", None) if info else None
        return saver if isinstance(saver, tf.train.Checkpoint) else None

    def sync_step_views(self, to_views=True):
        """Copies the global step into the towers' views of it (to_views), or the first view into the
        step (a Scaffold's checkpoint holds the view: it was restored into it)."""
        if to_views:
            for view in self.step_views:
                view.assign(self.registry.global_step)
        else:
            self.registry.global_step.assign(self.step_views[0])
