"""`Estimator`: tf.estimator's train / evaluate / predict / export on TF2.

Life of an Estimator:
  1. The first call that has data traces model_fn once for one tower
     (the "probe"), with variable creation allowed and every variable placed
     by the device plan (common.placement). Later probes (other modes) and
     every step trace must not create variables.
  2. Each call restores the latest checkpoint in model_dir (train: all
     state; eval/predict/export: model variables and the global step), or
     warm-starts, before it runs.
  3. train runs `steps_per_loop` steps per compiled call (common.loops) over
     the towers (common.tower_step), hooks firing at loop boundaries.
Nothing is written to model_dir before model_fn's spec has been checked.
"""

import inspect
import os
import re
import tempfile

import keras
import tensorflow as tf
from absl import logging

from common import checkpoints, export, hooks as hooks_lib, loops, multiworker, placement, signals, summaries, towers
from common.registry import ModelRegistry
from common.run_config import RunConfig
from common.spec import ModeKeys, check_spec
from common.tower_step import TowerStep, TrainVariables, metric_values


def _batchless(spec):
    """The per-tower shard spec: the batch dimension unknown."""
    if spec.shape.rank:
        return tf.TensorSpec([None] + spec.shape.as_list()[1:], spec.dtype)
    return spec


def _wanted_args(fn):
    return set(inspect.signature(fn).parameters)


class Estimator:
    """Trains, evaluates, predicts with and exports a model_fn.

    Args:
      model_fn: model_fn(features, labels, mode, params[, config]) ->
        EstimatorSpec. `labels`, `mode`, `params` and `config` may be left out
        of its signature.
      model_dir: where checkpoints, event files and exports go; defaults to
        config.model_dir, else a new temporary directory.
      config: a RunConfig.
      params: dict handed to model_fn and input_fn.
      warm_start_from: a checkpoint (prefix or directory) or a
        checkpoints.WarmStartSettings; used when model_dir has no checkpoint.
      frozen_variables: regex (re.match) of variable names not to train.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None, frozen_variables=None):
        config = config or RunConfig()
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(
                f"model_dir={model_dir!r} and config.model_dir={config.model_dir!r} differ")
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", model_dir)
        self._config = config.replace(model_dir=model_dir)
        self._model_fn = model_fn
        self._model_fn_args = _wanted_args(model_fn)
        if "features" not in self._model_fn_args:
            raise ValueError("model_fn must take an argument named 'features'")
        self._params = dict(params or {})
        if isinstance(warm_start_from, str):
            warm_start_from = checkpoints.WarmStartSettings(warm_start_from)
        if warm_start_from is not None:
            checkpoints.resolve(warm_start_from.ckpt_to_initialize_from, "warm_start_from")
            re.compile(warm_start_from.vars_to_warm_start)
        self._warm_start = warm_start_from
        self._frozen = re.compile(frozen_variables) if frozen_variables else None
        self._plan = self._config.device_plan
        self._store = checkpoints.CheckpointStore(
            model_dir, config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours)
        self._registry = None
        self._building = False
        self._balancer = None
        self._probes = {}
        self._optimizer = None
        self._model_vars = []
        self._train_vars = None
        self._last_spec = None
        self._cluster = self._config.cluster
        self._step = TowerStep(self._call_model_fn, self._plan, self._cluster,
                               compile_towers=self._config.compiled_unit() == towers.TOWER)
        self._loops = {}

    # ------------------------------------------------------------ properties
    @property
    def model_dir(self):
        return self._config.model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self):
        return dict(self._params)

    @property
    def variable_placement(self):
        """(name, bytes, device) of each variable spread by the GPU strategy."""
        return list(self._balancer.assignments) if self._balancer else []

    def variable_devices(self):
        """{variable name: device} of every variable built so far (model,
        optimizer, global step), named as in checkpoints."""
        if self._registry is None:
            return {}
        return {name: v.device for name, v in self._named_variables(with_optimizer=True).items()}

    def variable_values(self):
        """{name: numpy value} of every variable as it is in memory now: what this
        process trained, also on a host that keeps no checkpoint."""
        if self._registry is None:
            return {}
        return {name: v.numpy() for name, v in self._named_variables(with_optimizer=True).items()}

    def latest_checkpoint(self):
        return self._store.latest()

    def get_variable_names(self):
        latest = self._require_checkpoint()
        return sorted(checkpoints.variable_shapes(latest))

    def get_variable_value(self, name):
        return checkpoints.read_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        latest = self._store.latest()
        if not latest:
            raise ValueError(f"no checkpoint in model_dir {self.model_dir}; train first")
        return latest

    # -------------------------------------------------------- model_fn calls
    def _call_model_fn(self, features, labels, mode, global_step=None):
        kwargs = {"features": features}
        optional = {"labels": labels, "mode": mode, "params": self._params, "config": self._config}
        kwargs.update({k: v for k, v in optional.items() if k in self._model_fn_args})
        building, self._building = self._building, False  # only the first call builds
        creator = None
        if building:
            creator = placement.placing_creator(self._plan.variable_devices, self._balancer)
        with self._registry.model_fn_scope(building, creator, global_step):
            spec = self._model_fn(**kwargs)
        check_spec(spec, mode)
        if mode == ModeKeys.TRAIN and self._optimizer is None:
            self._optimizer = spec.optimizer
        self._last_spec = spec
        return spec

    def _probe(self, mode, input_signature, make_inputs):
        """Traces model_fn once on one tower; the first probe creates the model.

        Returns the spec's names: scalars, metrics, predictions.
        """
        if mode in self._probes:
            return self._probes[mode]
        first = self._registry is None
        if first:
            if self._config.tf_random_seed is not None:
                keras.utils.set_random_seed(self._config.tf_random_seed)
            self._registry = ModelRegistry(self._plan.consolidation_device)
            if len(self._plan.variable_devices) > 1:
                self._balancer = placement.GreedyLoadBalancer(self._plan.variable_devices)
            self._building = True

        def trace(*args):
            features, labels = make_inputs(*args)
            with tf.device(self._plan.tower_devices[0]):
                self._call_model_fn(features, labels, mode)

        try:
            tf.function(trace).get_concrete_function(*input_signature)
        finally:
            self._building = False
            if first:
                self._model_vars = self._registry.tracked_variables()
                self._log_placement()
        spec = self._last_spec
        predictions = spec.predictions
        info = {
            "scalars": tuple(spec.scalars),
            "metric_results": {name: m.result for name, m in spec.eval_metric_ops.items()},
            "totals": ("loss_sum", "count") + tuple(
                f"{name}/{part}" for name, m in spec.eval_metric_ops.items() for part in m.totals),
            "predictions_dict": isinstance(predictions, dict),
            "hooks": {ModeKeys.TRAIN: spec.training_hooks, ModeKeys.EVAL: spec.evaluation_hooks,
                      ModeKeys.PREDICT: spec.prediction_hooks}[mode],
        }
        if mode == ModeKeys.TRAIN:
            self._build_optimizer()
        self._probes[mode] = info
        return info

    def _log_placement(self):
        if not self._balancer:
            return
        for device, load in zip(self._balancer.devices, self._balancer.loads):
            count = sum(1 for _, _, d in self._balancer.assignments if d == device)
            logging.info("Variables on %s: %d, %.2f MB", device, count, load / 2**20)

    def _build_optimizer(self):
        trainable, frozen = [], []
        for tracked in self._model_vars:
            if tracked.trainable:
                held = self._frozen is not None and self._frozen.match(tracked.name)
                (frozen if held else trainable).append(tracked)
        if frozen:
            logging.info("Freezing %d variable(s) matching %r", len(frozen), self._frozen.pattern)
        stateful = [t for t in self._model_vars if not t.trainable and t.keras_variable is not None]
        with tf.device(self._plan.consolidation_device):
            self._optimizer.build([t.api_variable for t in trainable])
        self._train_vars = TrainVariables(trainable, frozen, stateful, self._optimizer, self._registry.global_step)

    # ------------------------------------------------------------ variables
    def _named_variables(self, with_optimizer):
        named = {checkpoints.GLOBAL_STEP: self._registry.global_step}
        named.update({t.name: t.variable for t in self._model_vars})
        if with_optimizer and self._optimizer is not None and self._train_vars is not None:
            for variable in self._optimizer.variables:
                path = variable.path.split("/", 1)[-1]
                named[checkpoints.OPTIMIZER_PREFIX + path] = getattr(variable, "value", variable)
        return named

    def _restore(self, mode, checkpoint_path=None):
        """Loads state for `mode`; returns the checkpoint used (or None)."""
        path = checkpoint_path or self._store.latest()
        training = mode == ModeKeys.TRAIN
        variables = self._named_variables(with_optimizer=training)
        if path:
            names = list(variables) if training else [checkpoints.GLOBAL_STEP] + [t.name for t in self._model_vars]
            checkpoints.restore(path, variables, names)
            return path
        if training and self._warm_start is not None and self.is_chief:
            checkpoints.warm_start(self._warm_start, variables, [t.name for t in self._model_vars])
        elif not training:
            logging.warning(
                "Could not find trained model in model_dir: %s, running initialization to %s.",
                self.model_dir, "evaluate" if mode == ModeKeys.EVAL else "predict")
        return None

    def _save(self, step, iterator=None):
        return self._store.save(step, self._named_variables(with_optimizer=True), iterator)

    # ----------------------------------------------------------------- input
    def _dataset(self, input_fn, mode):
        args = _wanted_args(input_fn)
        optional = {"params": self._params, "mode": mode, "config": self._config}
        dataset = input_fn(**{k: v for k, v in optional.items() if k in args})
        if not isinstance(dataset, tf.data.Dataset):
            raise TypeError(f"input_fn must return a tf.data.Dataset, got {type(dataset).__name__}")
        spec = dataset.element_spec
        has_labels = isinstance(spec, tuple) and len(spec) == 2
        if mode != ModeKeys.PREDICT and not has_labels:
            raise ValueError(
                f"input_fn for {mode} must yield (features, labels) pairs, got {spec}")
        if mode == ModeKeys.PREDICT and has_labels:
            dataset = dataset.map(lambda features, labels: features)
        return dataset

    def _probe_dataset(self, mode, dataset):
        spec = tf.nest.map_structure(_batchless, dataset.element_spec)
        if mode == ModeKeys.PREDICT:
            return self._probe(mode, (spec,), lambda features: (features, None))
        return self._probe(mode, spec, lambda features, labels: (features, labels))

    # ----------------------------------------------------------------- train
    def _default_hooks(self):
        config = self._config
        default = [hooks_lib.NanTensorHook()]
        if config.log_step_count_steps:
            default.append(hooks_lib.LoggingTensorHook(
                {"loss": "loss", "step": "global_step"}, every_n_iter=config.log_step_count_steps))
            default.append(hooks_lib.StepCounterHook(every_n_steps=config.log_step_count_steps))
        if config.save_summary_steps:
            default.append(hooks_lib.SummarySaverHook(save_steps=config.save_summary_steps))
        return default

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for `steps` more steps, up to global step `max_steps`, or until
        input_fn's data run out. Returns self.

        saving_listeners: objects with after_save(estimator, step), called after
        each checkpoint (train_and_evaluate evaluates there).
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise ValueError(f"Must specify {name} > 0, given: {value}")
        if self.is_chief:
            return self._train(input_fn, hooks, steps, max_steps, saving_listeners)
        with tempfile.TemporaryDirectory(prefix=f"worker{self._cluster.worker_index}_") as scratch:
            logging.info("Not the chief: checkpoints and summaries go to %s, removed after training.", scratch)
            chief_store, self._store = self._store, checkpoints.CheckpointStore(scratch)
            try:
                return self._train(input_fn, hooks, steps, max_steps, saving_listeners)
            finally:
                self._store = chief_store

    @property
    def is_chief(self):
        """True unless this is a non-chief host of a multi-host cluster."""
        return self._cluster is None or self._cluster.is_chief

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        latest = self._store.latest()
        if self._cluster is None and max_steps is not None and latest and checkpoints.step_of(latest) >= max_steps:
            logging.info("Skipping training since max_steps has already saved.")
            return self
        dataset = self._dataset(input_fn, ModeKeys.TRAIN)
        if self._cluster is not None:
            dataset = self._cluster.shard(dataset)
        info = self._probe_dataset(ModeKeys.TRAIN, dataset)
        restored = self._restore(ModeKeys.TRAIN)
        self._store.remove_partial_saves()
        if self._cluster is not None:
            self._cluster.broadcast_from_chief(self._named_variables(with_optimizer=True).values())
        start = int(self._registry.global_step.numpy())
        if restored:
            logging.info("Restored %s; resuming training at global step %d.", restored, start)
        last_step = max_steps if max_steps is not None else (start + steps if steps else None)
        if last_step is not None and start >= last_step:
            logging.info("Skipping training since max_steps has already saved.")
            return self
        all_hooks = (self._default_hooks() + list(hooks or ()) + list(info["hooks"])
                     + [hooks_lib.CheckpointSaverHook(self._config.save_checkpoints_steps,
                                                      self._config.save_checkpoints_secs)])
        values = ("loss", "learning_rate") + info["scalars"]
        listeners = list(saving_listeners or ())
        iterator = iter(dataset)
        input_state = iterator if self._config.checkpoint_input_pipeline and self._cluster is None else None
        if input_state is not None and restored:
            if checkpoints.restore_input(restored, iterator):
                logging.info("Restored the input pipeline's position from %s.", restored)
            else:
                logging.info("%s holds no input pipeline state; the input starts from the beginning.", restored)

        def save(step, initial):
            path = self._save(step, input_state)
            for listener in listeners if not initial else ():
                listener.after_save(self, step)
            return path

        output_dir = self._store.model_dir
        writer = tf.summary.create_file_writer(output_dir)
        context = hooks_lib.RunContext(
            output_dir, values + ("global_step",), start, writer, save,
            lambda: checkpoints.step_of(self._store.latest()) if self._store.latest() else None)
        try:
            with signals.StopRequests() as stop_requests:
                final_loss = self._run_train_loop(iterator, all_hooks, context, values, start, last_step,
                                                  stop_requests)
        finally:
            writer.close()
        logging.info("Loss for final step: %s.", final_loss)
        return self

    def _train_loop(self, values):
        if "train" not in self._loops:
            self._loops["train"] = loops.make_train_loop(
                lambda batch: self._step.train_step(batch, self._train_vars),
                values, self._config.compiled_unit() == towers.STEP)
        return self._loops["train"]

    def _run_train_loop(self, iterator, all_hooks, context, values, start, last_step, stop_requests):
        for hook in all_hooks:
            hook.begin(context)
        loop = self._train_loop(values)
        step, exhausted, final_loss = start, False, None
        while not (context.stop_requested or exhausted or (last_step is not None and step >= last_step)):
            count = self._config.steps_per_loop
            if last_step is not None:
                count = min(count, last_step - step)
            for hook in all_hooks:
                trigger = hook.steps_to_trigger(step)
                if trigger:
                    count = min(count, trigger)
            wanted = set()
            for hook in all_hooks:
                wanted.update(hook.before_step(step))
            with self._registry.model_fn_scope(), multiworker.reporting_lost_workers(self._cluster):
                ran, exhausted, outputs = loop(iterator, tf.constant(count, tf.int32))
            exhausted = bool(exhausted)
            if int(ran) == 0:
                break
            step = int(self._registry.global_step.numpy())
            fetched = {name: outputs[name].numpy() for name in wanted if name != "global_step"}
            fetched["global_step"] = step
            final_loss = outputs["loss"].numpy()
            for hook in all_hooks:
                hook.after_step(step, fetched, context)
            if stop_requests.received is not None:
                latest = self._store.latest()
                saved = latest if latest and checkpoints.step_of(latest) == step else context.save_checkpoint(
                    step, initial=True)
                raise signals.TrainingInterrupted(stop_requests.received, step, saved)
        for hook in all_hooks:
            hook.end(step, context)
        return final_loss

    # ------------------------------------------------------------------ eval
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates on `steps` batches (default: all of input_fn's data).

        Returns {metric: value, "loss": mean loss per example, "global_step": N}
        and writes them to model_dir/eval (or eval_<name>) for TensorBoard.
        """
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        dataset = self._dataset(input_fn, ModeKeys.EVAL)
        info = self._probe_dataset(ModeKeys.EVAL, dataset)
        self._restore(ModeKeys.EVAL, checkpoint_path)
        if "eval" not in self._loops:
            self._loops["eval"] = loops.make_eval_loop(self._step.eval_step, info["totals"])
        all_hooks = list(hooks or ()) + list(info["hooks"])
        context = hooks_lib.RunContext(self.model_dir, ("loss",))
        for hook in all_hooks:
            hook.begin(context)
        totals, done, exhausted = None, 0, False
        iterator = iter(dataset)
        while not exhausted and (steps is None or done < steps) and not context.stop_requested:
            count = self._config.steps_per_loop if steps is None else min(self._config.steps_per_loop, steps - done)
            with self._registry.model_fn_scope():
                ran, exhausted, batch_totals = self._loops["eval"](iterator, tf.constant(count, tf.int32))
            ran, exhausted = int(ran), bool(exhausted)
            if ran == 0:
                break
            done += ran
            batch_totals = {k: v.numpy() for k, v in batch_totals.items()}
            totals = batch_totals if totals is None else {k: totals[k] + batch_totals[k] for k in totals}
            for hook in all_hooks:
                hook.after_step(done, {"loss": totals["loss_sum"] / max(totals["count"], 1)}, context)
        if totals is None or totals["count"] == 0:
            raise ValueError("evaluate: input_fn yielded no data")
        results = metric_values(totals, info["metric_results"])
        results["loss"] = float(totals["loss_sum"] / totals["count"])
        results["global_step"] = int(self._registry.global_step.numpy())
        for hook in all_hooks:
            hook.end(done, context)
        self._write_eval_summaries(results, name)
        return results

    def _write_eval_summaries(self, results, name):
        eval_dir = os.path.join(self.model_dir, "eval" if not name else f"eval_{name}")
        step = results["global_step"]
        text = ", ".join(f"{k} = {v:g}" for k, v in sorted(results.items()))
        logging.info("Saving dict for global step %d: %s", step, text)
        writer = tf.summary.create_file_writer(eval_dir)
        summaries.write_scalars(writer, step, {k: v for k, v in results.items() if k != "global_step"})
        writer.close()

    # --------------------------------------------------------------- predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions: one dict (or array) per example, in input order."""
        dataset = self._dataset(input_fn, ModeKeys.PREDICT)
        info = self._probe_dataset(ModeKeys.PREDICT, dataset)
        self._restore(ModeKeys.PREDICT, checkpoint_path)
        if "predict" not in self._loops:
            self._loops["predict"] = tf.function(self._step.predict_step, reduce_retracing=True)
        for features in dataset:
            with self._registry.model_fn_scope():
                batch = self._loops["predict"](features)
            if predict_keys is not None:
                unknown = sorted(set(predict_keys) - set(batch))
                if unknown:
                    raise ValueError(f"predict_keys {unknown} are not among the predictions {sorted(batch)}")
                batch = {k: batch[k] for k in predict_keys}
            batch = {k: v.numpy() for k, v in batch.items()}
            if not info["predictions_dict"] and predict_keys is None:
                batch = batch["predictions"]
            if not yield_single_examples:
                yield batch
                continue
            size = len(next(iter(batch.values()))) if isinstance(batch, dict) else len(batch)
            for index in range(size):
                if isinstance(batch, dict):
                    yield {k: v[index] for k, v in batch.items()}
                else:
                    yield batch[index]

    # ---------------------------------------------------------------- export
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, checkpoint_path=None):
        """Exports the latest checkpoint's model as a SavedModel; returns its path.

        The served function runs model_fn in PREDICT mode on one device and
        returns its predictions dict.
        """
        receiver = serving_input_receiver_fn()
        names = sorted(receiver.receiver_specs)
        specs = tuple(receiver.receiver_specs[n] for n in names)
        self._probe(ModeKeys.PREDICT, specs,
                    lambda *received: (receiver.features_fn(dict(zip(names, received))), None))
        self._restore(ModeKeys.PREDICT, checkpoint_path)

        def predict_fn(features):
            predictions = self._call_model_fn(features, None, ModeKeys.PREDICT).predictions
            return predictions if isinstance(predictions, dict) else {"predictions": predictions}

        module = tf.Module()
        module.model_variables = [t.variable for t in self._model_vars]
        with self._registry.model_fn_scope():
            signatures = {
                key: export.serving_function(r, predict_fn).get_concrete_function()
                for key, r in receiver.signatures().items()
            }
        return export.write_saved_model(export_dir_base, module, signatures)

