"""One step over all towers: train (gradients, averaging, update), eval, predict.

model_fn stays single-tower; this module calls it once per tower, each under its device, on that tower's shard of
the global batch.

Batch-norm moving statistics (and any other floating-point non-trainable Keras state): each tower runs inside a
`keras.StatelessScope`, which records the tower's new value instead of assigning it; after all towers, each
statistic gets the mean of the towers' new values. Since every tower starts from the same old value v, that is m*v +
(1-m)*mean_i(batch_stat_i): the moving mean moves exactly as one tower on the whole batch would make it move, the
moving variance by the mean of the per-shard variances. (The official example kept tower 0's update only, which sees
1/N of the batch.) Integer state, such as dropout's seed-generator counter, is assigned tower after tower, so every
tower draws different random numbers.

With TOWER compilation (common.devices.plan) each tower's pass is one XLA cluster on the tower's device. A cluster
cannot read a variable on another device, so the step reads every variable the towers use once, outside (packed
by common.engine.exchange, which also brings the gradients back and applies them per variable device), and each
tower runs on those values (a StatelessScope's state mapping) and differentiates with respect to them; model_fn's
global step there is a copy of it on the tower's device, set before the tower runs. Tower i > 0 gets every integer
state with i added to its first element (for a Keras SeedGenerator, its seed), so the towers still draw different
random numbers without waiting on each other, and the state keeps tower 0's update.
"""

import contextlib
import dataclasses
from typing import Dict, List, NamedTuple, Optional

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.devices import precision
from common.devices.plan import HOST_DEVICE, STEP, TOWER, DevicePlan
from common.engine import exchange, step_checks, towers
from common.hooks import signals
from common.spec import metrics
from common.spec.model_fn import ModeKeys
from common.variables.registry import tf_variable
from common.variables.served import TowerStateScope


@dataclasses.dataclass
class TrainVariables:
    """What a train step reads and writes."""

    trainable: list            # TrackedVariable, trained by the optimizer
    frozen: list               # TrackedVariable, trainable but held fixed (frozen_variables)
    stateful: list             # TrackedVariable, non-trainable Keras state
    optimizer: object
    global_step: tf.Variable

    def read_by_towers(self):
        """The Keras variables a train tower reads, trainable ones first."""
        model = self.trainable + self.frozen + self.stateful
        plain = [t.name for t in model if t.keras_variable is None]
        if plain:
            raise ValueError(
                f"jit_compile over several devices compiles each tower on the values of Keras variables, "
                f"but {', '.join(plain)} {'is a' if len(plain) == 1 else 'are'} plain tf.Variable"
                f"{'' if len(plain) == 1 else 's'}; build the model from Keras layers, or train without "
                "--jit_compile")
        return [t.keras_variable for t in model] + precision.loss_scale_variables(self.optimizer)


class TowerOutputs(NamedTuple):
    """What one train tower computed on its shard (a NamedTuple: a compiled
    tower returns it from a tf.function)."""

    loss: tf.Tensor                      # float32, the loss reported
    grads: List[Optional[tf.Tensor]]     # aligned with TrainVariables.trainable; None where no gradient
    state_updates: Dict[int, tf.Tensor]  # index in TrainVariables.stateful -> the tower's new value
    scalars: Dict[str, tf.Tensor]        # the spec's scalars, float32
    learning_rate: Optional[tf.Tensor]   # the spec's learning rate, or its deferred optimizer's, if it says
    named_tensors: Dict[str, tf.Tensor]  # tensors of model_fn's graph a hook asked for by name
    update_grads: List[List[Optional[tf.Tensor]]]  # each deferred update's gradients, aligned with its pairs
    assigns: List[tf.Tensor]             # the values of the call's assign_after_step, in their order
    record: object = None                # the call's CallRecord (its deferred updates): not from a compiled tower
    packed_grads: tuple = ()             # with a packed exchange: per variable device, its gradients' buffers
    packed_states: tuple = ()            # likewise its floating state updates (grads is [], state_updates integer)


def tower_scope(index):
    """The name scope of tower `index`'s ops (its summaries' tags start with it; the first's is
    common.hooks.protocol.FIRST_TOWER_SCOPE)."""
    return f"tower_{index}"


def _first_leaf(structure):
    return tf.nest.flatten(structure)[0]


def _as_prediction_dict(predictions):
    if isinstance(predictions, dict):
        return dict(predictions)
    return {"predictions": predictions}


class TowerStep:
    """Builds the per-step computations for one Estimator's device plan.

    model: the engine's ModelBuilder (model.call runs model_fn in the
    Estimator's registry scope; model.apply does deferred updates;
    model.step_views are the towers' views of the global step). cluster: the
    hosts (common.multiworker); jit_compile: True, False or None (auto),
    turned here, once, into what XLA compiles (DevicePlan.compiled_unit).
    """

    def __init__(self, model, plan: DevicePlan, cluster, jit_compile=None):
        self._model = model
        self._plan = plan
        self._cluster = cluster
        self.compiled_unit = plan.compiled_unit(jit_compile, across_hosts=cluster.num_workers > 1)
        self._towers_decided = jit_compile is not None  # auto TOWER: until the model is seen (_towers_compile)
        self._compiled_towers = {} if self.compiled_unit == TOWER else None
        self._exchange = None  # TOWER on one host: its PackedExchange, or False where the optimizer needs none
        self.stop_signal = None  # across hosts: this host's stop signal, all-reduced with every step's loss
        if cluster.num_workers > 1:
            with tf.device(HOST_DEVICE):
                self.stop_signal = tf.Variable(0.0, trainable=False, name="cluster_stop_signal")

    @property
    def probes_in_step(self):
        """Whether a train step can be the TRAIN probe, its call building the model: on one tower (that call's
        Keras state is updated in place, as one tower's average is) of one host (a step traced apart from its
        loop cannot all-reduce in it), not where XLA compiles the step."""
        return (self._plan.num_towers == 1 and self._cluster.num_workers == 1
                and self.compiled_unit not in (STEP, TOWER))

    @property
    def compiles_whole_step(self):
        """Whether the train step is to be compiled as one XLA cluster."""
        return self.compiled_unit == STEP

    # ----------------------------------------------------------------- train
    def _tower_train(self, features, labels, variables: TrainVariables, named, values=None,
                     global_step=None) -> TowerOutputs:
        """One tower's pass on its shard. values: None reads the variables themselves; a compiled tower gets the
        value of each of variables.read_by_towers(). global_step: the tower's view of the step. variables None:
        the step is the TRAIN probe, this call builds the model (outside a StatelessScope, in which Keras would
        defer the variables a layer makes)."""
        name_scope = tf.compat.v1.get_default_graph().get_name_scope()
        building = variables is None
        state_mapping = [] if values is None else list(zip(variables.read_by_towers(), values))
        with tf.GradientTape() as tape:
            if values is not None:
                tape.watch(values[:len(variables.trainable)])
            with contextlib.nullcontext() if building else TowerStateScope(state_mapping) as scope:
                given = {} if building else dict(scope.state_mapping)
                spec, record = self._model.call(features, labels, ModeKeys.TRAIN, global_step)
                if building:
                    variables = self._model.finish_train_build(spec.optimizer)
                tensors = step_checks.graph_tensors(named, name_scope)
                loss = tf.cast(spec.loss, tf.float32)
                differentiated = precision.scaled(loss, variables.optimizer)
        sources = [t.variable for t in variables.trainable] if values is None else values[:len(variables.trainable)]
        grads = tape.gradient(differentiated, sources) if variables.optimizer is not None else []
        updates = {}
        for index, tracked in enumerate([] if building else variables.stateful):
            new_value = scope.new_value(tracked.keras_variable)
            if new_value is not None and new_value is not given.get(id(tracked.keras_variable)):
                updates[index] = new_value
        scalars = {name: tf.cast(value, tf.float32) for name, value in spec.scalars.items()}
        learning_rate = spec.learning_rate
        if learning_rate is None and record.updates:
            learning_rate = record.updates[0].learning_rate
        return TowerOutputs(loss, grads, updates, scalars, learning_rate, tensors,
                            [[g for g, _ in update.grads_and_vars] for update in record.updates],
                            [value for _, value in record.assigns], record)

    def _compiled_tower(self, index, variables: TrainVariables, named):
        """Tower `index`'s pass as a jit-compiled function (one each: a trace holds its device)."""
        key = (index, named)
        if key not in self._compiled_towers:
            view = self._model.step_views[index]
            packed = self._packed_exchange(variables)

            def compiled(features, labels, values):
                given = towers.integer_state_offset(packed.values(values) if packed else values, index)
                outputs = self._tower_train(features, labels, variables, named, given, view)
                if outputs.record.updates or outputs.record.assigns or outputs.record.after_update:
                    raise ValueError("jit_compile over several devices compiles each tower on its own, but this "
                                     "model_fn's train_op updates variables itself (a TF1 or Keras optimizer made in "
                                     "model_fn, or TF1 batch norm): train it without --jit_compile")
                outputs = outputs._replace(record=None)
                if not packed:
                    return outputs
                step_checks.refuse_a_loss_without_gradients(outputs, variables)
                return packed.pack_outputs(outputs, given)

            self._compiled_towers[key] = tf.function(compiled, jit_compile=True, autograph=False)
        return self._compiled_towers[key]

    def _tower_passes(self, shards, variables: Optional[TrainVariables], named):
        """(Each tower's TowerOutputs, the TrainVariables): each pass under its device and name scope; integer
        state updates are assigned here, floating ones left to average. variables None: the call builds them."""
        compiled = self._compiled_towers is not None and self._towers_compile(variables)
        if compiled and self._packed_exchange(variables):
            values = self._exchange.read()
        elif compiled:
            values = [keras_variable.value.read_value() for keras_variable in variables.read_by_towers()]
        step = self._model.global_step.read_value()
        results = []
        for index, (device, (shard_features, shard_labels)) in enumerate(zip(self._plan.tower_devices, shards)):
            view = self._model.step_views[index]
            with tf.device(device), tf.name_scope(tower_scope(index)):
                view.assign(step)
                if compiled:
                    result = self._compiled_tower(index, variables, named)(shard_features, shard_labels, values)
                else:
                    result = self._tower_train(shard_features, shard_labels, variables, named, global_step=view)
                    variables = variables or self._model.train_variables
            updates = result.state_updates
            for var_index in list(updates):
                tracked = variables.stateful[var_index]
                if not tracked.variable.dtype.is_floating:
                    new_value = updates.pop(var_index)
                    if index == 0 or not compiled:  # the next uncompiled tower reads it
                        tracked.variable.assign(new_value)
            results.append(result)
        return results, variables

    def train_step(self, batch, variables: Optional[TrainVariables] = None, named=()):
        """Runs every tower on its shard, averages, applies; returns step values and the tensors model_fn named
        `named` (a tuple). variables None: the model's, built by the call if this step is the TRAIN probe."""
        plan = self._plan
        features, labels = batch
        shards = towers.split_batch((features, labels), plan.num_towers)
        passes, variables = self._tower_passes(shards, variables or self._model.train_variables, tuple(named))
        if self._exchange:
            return self._finish_packed(passes, variables, named)
        step_checks.refuse_a_loss_without_gradients(passes[0], variables)
        statistics: Dict[int, List[tf.Tensor]] = {}
        for tower in passes:
            for var_index, new_value in tower.state_updates.items():
                statistics.setdefault(var_index, []).append(new_value)
        statistics = {index: towers.mean_on(variables.stateful[index].variable.device, values)
                      for index, values in statistics.items()}
        assigned = [variable for variable, _ in passes[0].record.assigns] if passes[0].record else []
        assigns = [towers.mean_on(variable.device, [t.assigns[i] for t in passes])
                   for i, variable in enumerate(assigned)]
        grads, update_vars = self._averaged_gradients(passes, variables)
        loss = towers.mean_on(plan.consolidation_device, [t.loss for t in passes])
        grads, statistics, assigns, loss, stop = self._reduce_across_hosts(grads, statistics, assigns, loss)
        if not precision.scales_loss(variables.optimizer):  # that optimizer skips non-finite updates itself
            loss = step_checks.nan_unless_finite(loss, [g for update_grads in grads for g in update_grads],
                                      plan.consolidation_device)
        for index, value in statistics.items():
            variables.stateful[index].variable.assign(value)
        for variable, value in zip(assigned, assigns):
            variable.assign(value)
        reported_lr = self._apply(passes, variables, grads, update_vars)
        with tf.device(plan.consolidation_device):
            variables.global_step.assign_add(1)
            self._model.after_update(passes[0].record)
        return self._step_outputs(passes, loss, stop, reported_lr, named)

    def _towers_compile(self, variables: TrainVariables):
        """Whether TOWER steps compile each tower: always once asked (jit_compile=True: a model that cannot is
        refused by name); by default, unless the model reads a plain tf.Variable or its train_op updates
        variables itself, where the towers run uncompiled (said once in the log)."""
        if not self._towers_decided:
            self._towers_decided = True
            info = self._model.probe_info(ModeKeys.TRAIN)
            plain = [t.name for t in variables.trainable + variables.frozen + variables.stateful
                     if t.keras_variable is None]
            reason = (f"{plain[0]} is a plain tf.Variable" if plain else
                      "model_fn's train_op updates variables itself" if info and info.updates_itself else None)
            if reason:
                logging.info("Towers run without XLA (by default each GPU tower compiles): %s", reason)
                self.compiled_unit, self._compiled_towers = None, None
        return self._compiled_towers is not None

    def _packed_exchange(self, variables: TrainVariables):
        """The TOWER step's PackedExchange on one host (common.engine.exchange), or None where the optimizer
        needs every gradient at once."""
        if self._exchange is None:
            usable = self._cluster.num_workers == 1 and exchange.applies_per_device(variables.optimizer,
                                                                                      variables.trainable)
            self._exchange = exchange.PackedExchange(variables) if usable else False
        return self._exchange or None

    def _finish_packed(self, passes, variables: TrainVariables, named):
        """The rest of a packed step: the mean loss (NaN where a gradient is not), the update on each
        variable device, the step counted."""
        loss = towers.mean_on(self._plan.consolidation_device, [t.loss for t in passes])
        reported_lr = self._set_learning_rate(passes, variables.optimizer)
        finite = self._exchange.apply(passes)
        with tf.device(self._plan.consolidation_device):
            loss = step_checks.nan_unless(finite, loss)
            variables.global_step.assign_add(1)
        return self._step_outputs(passes, loss, None, reported_lr, named)

    def _step_outputs(self, passes, loss, stop, reported_lr, named):
        """What a train step returns: its loss, stop signal, learning rate, the spec's scalars, named tensors."""
        plan = self._plan
        outputs = {"loss": loss}
        if stop is not None:
            outputs[signals.STOP_VALUE] = stop
        if reported_lr is not None:
            outputs["learning_rate"] = reported_lr
        for name in passes[0].scalars:
            outputs[name] = towers.mean_on(plan.consolidation_device, [t.scalars[name] for t in passes])
        for name in named:
            outputs.setdefault(name, towers.whole_batch_value([t.named_tensors[name] for t in passes],
                                                              plan.consolidation_device))
        return outputs

    def _averaged_gradients(self, passes, variables: TrainVariables):
        """([averaged gradients] per update, [its variables] per update): the one update of the spec's
        optimizer (over variables.trainable), or each deferred update model_fn made."""
        if variables.optimizer is not None:
            trained = [t.variable for t in variables.trainable]
            return [towers.average_gradients([t.grads for t in passes], trained)], [trained]
        frozen = {tf_variable(t.variable).ref() for t in variables.frozen}
        grads, update_vars = [], []
        for index, update in enumerate(passes[0].record.updates):
            update_variables = [tf_variable(v) for _, v in update.grads_and_vars]
            for tower, other in enumerate(passes[1:], 1):
                if [tf_variable(v).ref() for _, v in other.record.updates[index].grads_and_vars] != \
                        [v.ref() for v in update_variables]:
                    raise ValueError(f"tower {tower}'s model_fn updates other variables than tower 0's; every call "
                                     "of model_fn must update the same variables in the same order")
            averaged = towers.average_gradients([t.update_grads[index] for t in passes], update_variables)
            grads.append([None if v.ref() in frozen else g for g, v in zip(averaged, update_variables)])
            update_vars.append(update_variables)
        return grads, update_vars

    def _apply(self, passes, variables: TrainVariables, grads, update_vars):
        """Applies the averaged gradients; returns the learning rate to report (float32), or None."""
        plan = self._plan
        if variables.optimizer is None:
            with tf.device(plan.consolidation_device):
                self._model.apply(passes[0].record.updates, grads, self._model.step_views[0])
            rate = passes[0].learning_rate
            return None if rate is None else tf.cast(rate, tf.float32)
        reported_lr = self._set_learning_rate(passes, variables.optimizer)
        with tf.device(plan.consolidation_device):
            pairs = [(g, t.api_variable) for g, t in zip(grads[0], variables.trainable) if g is not None]
            variables.optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
        return reported_lr

    def _set_learning_rate(self, passes, optimizer):
        """Sets the spec's learning rate, if it gives one, on the optimizer; returns the rate (float32)."""
        with tf.device(self._plan.consolidation_device):
            if passes[0].learning_rate is not None:
                optimizer.learning_rate = passes[0].learning_rate
            return tf.cast(optimizer.learning_rate, tf.float32)

    def _reduce_across_hosts(self, grads, statistics, assigns, loss):
        """The mean over hosts of the per-host gradients (a list per update),
        statistics, assigned values, loss and stop signal (on one host: themselves, and None)."""
        flat = [(u, i) for u, update_grads in enumerate(grads) for i, g in enumerate(update_grads) if g is not None]
        keys = sorted(statistics)
        stop = [] if self.stop_signal is None else [self.stop_signal.read_value()]
        reduced = self._cluster.all_reduce([grads[u][i] for u, i in flat] + [statistics[k] for k in keys]
                                           + list(assigns) + [loss] + stop)
        grads = [list(update_grads) for update_grads in grads]
        for position, (u, i) in enumerate(flat):
            grads[u][i] = reduced[position]
        rest = reduced[len(flat):]
        statistics = dict(zip(keys, rest[:len(keys)]))
        rest_assigns = rest[len(keys):len(keys) + len(assigns)]
        loss = rest[len(keys) + len(assigns)]
        return grads, statistics, rest_assigns, loss, (rest[-1] if stop else None)

    # ------------------------------------------------------------------ eval
    def eval_step(self, batch, named=()):
        """The example count, the mean loss (and 1 batch, when it has examples)
        and the metric totals of one batch over all towers; and the tensors model_fn named `named` (a hook's)."""
        features, labels = batch
        shards = towers.split_batch((features, labels), self._plan.num_towers, allow_uneven=True)
        loss_sum, count, totals, tensors = tf.constant(0.0, tf.float64), tf.constant(0.0, tf.float64), None, []
        for index, (device, (shard_features, shard_labels)) in enumerate(zip(self._plan.tower_devices, shards)):
            with tf.device(device), tf.name_scope(tower_scope(index)):
                spec = self._model.call(shard_features, shard_labels, ModeKeys.EVAL).spec
                tensors.append(step_checks.graph_tensors(named, tf.compat.v1.get_default_graph().get_name_scope()))
                examples = tf.cast(tf.shape(_first_leaf(shard_features))[0], tf.float64)
                loss = tf.cast(spec.loss, tf.float64)
                loss_sum += tf.where(examples > 0, loss * examples, tf.zeros_like(loss))
                count += examples
                tower_totals = {f"{name}/{part}": tf.cast(value, tf.float64)
                                for name, metric in spec.eval_metric_ops.items()
                                for part, value in metrics.totals_of(metric).items()}
            totals = tower_totals if totals is None else {k: totals[k] + tower_totals[k] for k in totals}
        with tf.device(HOST_DEVICE):
            has_examples = count > 0  # (a batch's mean loss counts once, as tf.estimator's loss metric did)
            batch_loss = tf.where(has_examples, loss_sum / tf.maximum(count, 1.0), tf.zeros_like(loss_sum))
            return {"count": count, "batch_loss_sum": batch_loss, "batches": tf.cast(has_examples, tf.float64),
                    **totals, **{name: towers.whole_batch_value([t[name] for t in tensors]) for name in named}}

    # --------------------------------------------------------------- predict
    def predict_step(self, features):
        """The predictions of every tower, concatenated in input order."""
        shards = towers.split_batch(features, self._plan.num_towers, allow_uneven=True)
        per_tower = []
        for index, (device, shard) in enumerate(zip(self._plan.tower_devices, shards)):
            with tf.device(device), tf.name_scope(tower_scope(index)):
                per_tower.append(_as_prediction_dict(self._model.call(shard, None, ModeKeys.PREDICT).spec.predictions))
        with tf.device(HOST_DEVICE):
            return {key: tf.concat([p[key] for p in per_tower], axis=0) for key in per_tower[0]}

