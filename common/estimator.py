"""`Estimator`: tf.estimator's train / evaluate / predict / export on TF2.

A façade: each method assembles its parts and hands the work on.
  - common.model_builder calls model_fn and owns the variables its first
    call builds;
  - common.tower_step runs one step over the towers, common.loops several
    per compiled call;
  - common.train_loop, eval_loop and predict_loop are the outer loops, the hooks
    (common.hooks) and their triggers saying what happens between calls;
  - common.checkpoints names, saves and restores the state.
Each call restores the latest checkpoint in model_dir (train: all state;
eval/predict/export: model variables and the global step), or warm-starts,
before it runs. Nothing is written to model_dir before model_fn's spec has
been checked.
"""

import os
import re
import tempfile

import tensorflow as tf
from absl import logging

from common import (checkpoints, eval_loop, export, hooks as hooks_lib, inputs, loops, model_dir_lock, predict_loop,
                    receivers, signals, train_loop)
from common.model_builder import ModelBuilder
from common.run_config import RunConfig
from common.spec import ModeKeys
from common.tf1 import session_run_hook
from common.tower_step import TowerStep


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
        self._params = dict(params or {})
        if isinstance(warm_start_from, str):
            warm_start_from = checkpoints.WarmStartSettings(warm_start_from)
        if warm_start_from is not None:
            checkpoints.resolve(warm_start_from.ckpt_to_initialize_from, "warm_start_from")
            re.compile(warm_start_from.vars_to_warm_start)
        self._warm_start = warm_start_from
        frozen = re.compile(frozen_variables) if frozen_variables else None
        self._model = ModelBuilder(model_fn, self._params, self._config, frozen)
        self._store = checkpoints.CheckpointStore(
            model_dir, config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours)
        self._cluster = self._config.cluster
        self._step = TowerStep(self._model.call, self._config.device_plan, self._cluster, self._config.jit_compile)
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
    def is_chief(self):
        """True unless this is a non-chief host of a multi-host cluster."""
        return self._cluster.is_chief

    @property
    def is_evaluator(self):
        """True on TF_CONFIG's evaluator task (train_and_evaluate then only evaluates)."""
        return self._cluster.is_evaluator

    @property
    def variable_placement(self):
        """(name, bytes, device) of each variable spread by the GPU strategy."""
        return self._model.variable_placement

    def variable_devices(self):
        """{variable name: device} of every variable built so far (model,
        optimizer, global step), named as in checkpoints."""
        return {name: v.device for name, v in self._model.named_state(with_optimizer=True).items()}

    def variable_values(self):
        """{name: numpy value} of every variable as it is in memory now: what this
        process trained, also on a host that keeps no checkpoint."""
        return {name: v.numpy() for name, v in self._model.named_state(with_optimizer=True).items()}

    def eval_dir(self, name=None):
        """Where evaluate(name=...) writes its events: model_dir/eval, or eval_<name>."""
        return eval_loop.eval_dir(self.model_dir, name)

    def latest_checkpoint(self):
        return self._store.latest()

    def get_variable_names(self):
        return sorted(checkpoints.variable_shapes(self._require_checkpoint()))

    def get_variable_value(self, name):
        return checkpoints.read_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        latest = self._store.latest()
        if not latest:
            raise ValueError(f"no checkpoint in model_dir {self.model_dir}; train first")
        return latest

    # ---------------------------------------------------- input and state
    def _dataset(self, input_fn, mode):
        """input_fn's dataset for `mode`: this host's share of the training data,
        and, under a RunConfig strategy, a tower's worth of elements per step."""
        num_towers = self._config.device_plan.num_towers
        optional = {"params": self._params, "config": self._config,
                    "input_context": inputs.input_context(self._cluster, num_towers)}
        dataset = inputs.dataset_for(input_fn, mode, optional)
        if mode == ModeKeys.TRAIN and not inputs.takes_input_context(input_fn):
            dataset = self._cluster.shard(dataset)
        if self._config.batch_per_replica:
            dataset = inputs.merge_replica_batches(dataset, num_towers)
        return dataset

    def _probe_dataset(self, mode, dataset):
        signature = inputs.shard_signature(dataset)
        if mode == ModeKeys.PREDICT:
            return self._model.probe(mode, (signature,), lambda features: (features, None))
        return self._model.probe(mode, signature, lambda features, labels: (features, labels))

    def _restore(self, mode, checkpoint_path=None):
        """Loads state for `mode` from checkpoint_path, else from the newest
        checkpoint in model_dir that loads; returns the one used (or None)."""
        training = mode == ModeKeys.TRAIN
        state = self._model.named_state(with_optimizer=training)
        model_names = [t.name for t in self._model.model_variables]
        names = list(state) if training else [checkpoints.GLOBAL_STEP] + model_names
        if checkpoint_path:
            checkpoints.restore(checkpoint_path, state, names)
            path = checkpoint_path
        else:
            path = self._store.restore_newest(lambda prefix: checkpoints.restore(prefix, state, names))
        if path:
            if not training:
                logging.info("Restoring parameters from %s", path)
            return path
        if training and self._warm_start is not None and self.is_chief:
            checkpoints.warm_start(self._warm_start, state, model_names,
                                   [t.name for t in self._model.model_variables if t.trainable])
        elif not training:
            logging.warning(
                "Could not find trained model in model_dir: %s, running initialization to %s.",
                self.model_dir, "evaluate" if mode == ModeKeys.EVAL else "predict")
        return None

    def _run_in_scope(self, loop, *args):
        with self._model.scope(), self._cluster.reporting_lost_workers():
            return loop(*args)

    # ----------------------------------------------------------------- train
    def _default_hooks(self, steps, max_steps, batch_size):
        config = self._config
        default = [hooks_lib.StopAtStepHook(num_steps=steps, last_step=max_steps)] if steps or max_steps else []
        default.append(hooks_lib.NanTensorHook())
        if config.log_step_count_steps:
            default.append(hooks_lib.LoggingTensorHook(
                {"loss": "loss", "step": "global_step"}, every_n_iter=config.log_step_count_steps))
            default.append(hooks_lib.StepCounterHook(every_n_steps=config.log_step_count_steps))
            if steps or max_steps:
                default.append(hooks_lib.ProgressHook(num_steps=steps, last_step=max_steps, batch_size=batch_size,
                                                      every_n_steps=config.log_step_count_steps))
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

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        dataset = self._dataset(input_fn, ModeKeys.TRAIN)
        info = self._probe_dataset(ModeKeys.TRAIN, dataset)
        restored = self._restore(ModeKeys.TRAIN)
        if self.is_chief:  # the first write: after every check, so a refused run leaves model_dir as it was
            model_dir_lock.hold(self.model_dir)
        self._store.remove_partial_saves()
        state = self._model.named_state(with_optimizer=True)
        self._cluster.broadcast_from_chief(state.values())
        start = int(self._model.global_step.numpy())
        if max_steps is not None and start >= max_steps:
            logging.info("Skipping training since max_steps has already saved.")
            return self
        if restored:
            logging.info("Restored %s; resuming training at global step %d.", restored, start)
        iterator = iter(dataset)
        # Across hosts only the chief keeps checkpoints, so no host's input position could be restored.
        input_state = iterator if self._config.checkpoint_input_pipeline and self._cluster.num_workers == 1 else None
        if input_state is not None and restored:
            if checkpoints.restore_input(restored, iterator):
                logging.info("Restored the input pipeline's position from %s.", restored)
            else:
                logging.info("%s holds no input pipeline state; the input starts from the beginning.", restored)
        user_hooks = _user_hooks(hooks, info)
        savers = [h for h in user_hooks if isinstance(h, hooks_lib.CheckpointSaverHook)]
        self._check_checkpoint_dirs(savers)
        listeners = session_run_hook.adapt_listeners(
            list(saving_listeners or ()) + [x for saver in savers[:1] for x in saver.listeners])

        def save(step, initial):
            path = self._store.save(step, state, input_state)
            for listener in listeners:
                if not initial or getattr(listener, "hears_initial_save", False):
                    listener.after_save(self, step)
            return path

        values = ("loss", "learning_rate") + info.scalars
        loop = self._train_loop(values)

        def run_steps(count, wanted):
            """`count` steps; when hooks want tensors of model_fn's graph, the last runs alone to fetch them."""
            named = tuple(sorted(set(wanted) - set(values)))
            if not named:
                return self._run_in_scope(loop, iterator, tf.constant(count, tf.int32))
            ran, exhausted, outputs = 0, False, {}
            if count > 1:
                ran, exhausted, outputs = self._run_in_scope(loop, iterator, tf.constant(count - 1, tf.int32))
                if bool(exhausted) or int(ran) < count - 1:
                    return ran, exhausted, outputs
            last_ran, last_exhausted, last_outputs = self._run_in_scope(self._fetching_step(named), iterator)
            if not last_ran:
                return ran, True, outputs
            return int(ran) + 1, last_exhausted, last_outputs

        writer = tf.summary.create_file_writer(self._store.model_dir)
        context = hooks_lib.RunContext(self._store.model_dir, values + ("global_step",), start, writer, save,
                                       self._store.latest, info.graph_tensors)
        try:
            with signals.StopRequests() as stop_requests:
                default_saver = [] if savers else [hooks_lib.CheckpointSaverHook(
                    save_steps=self._config.save_checkpoints_steps, save_secs=self._config.save_checkpoints_secs)]
                all_hooks = (self._default_hooks(steps, max_steps, inputs.global_batch_size(dataset))
                             + user_hooks + default_saver
                             + [x for x in listeners if isinstance(x, hooks_lib.Hook)]  # TF1 listeners' begin/end
                             + [signals.StopOnSignalHook(stop_requests)])
                final_loss = train_loop.run(run_steps, lambda: int(self._model.global_step.numpy()), all_hooks,
                                            context, self._config.steps_per_loop)
        finally:
            writer.close()
        logging.info("Loss for final step: %s.", final_loss)
        return self

    def _check_checkpoint_dirs(self, savers):
        for saver in savers:
            if saver.checkpoint_dir and os.path.abspath(saver.checkpoint_dir) != os.path.abspath(self.model_dir):
                raise ValueError(f"CheckpointSaverHook(checkpoint_dir={saver.checkpoint_dir!r}): checkpoints go to "
                                 f"the estimator's model_dir, {self.model_dir}")

    def _train_loop(self, values):
        if "train" not in self._loops:
            train_variables = self._model.train_variables
            self._loops["train"] = loops.make_train_loop(
                lambda batch: self._step.train_step(batch, train_variables), values, self._step.compiles_whole_step)
        return self._loops["train"]

    def _fetching_step(self, named):
        """One train step that also returns the tensors model_fn named `named`."""
        key = ("fetch", named)
        if key not in self._loops:
            train_variables = self._model.train_variables
            self._loops[key] = loops.make_fetching_step(
                lambda batch: self._step.train_step(batch, train_variables, named), self._step.compiles_whole_step)
        return self._loops[key]

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
        restored = self._restore(ModeKeys.EVAL, checkpoint_path)
        if "eval" not in self._loops:
            self._loops["eval"] = loops.make_eval_loop(self._step.eval_step, info.totals)
        iterator = iter(dataset)
        info.reset_metrics()
        totals = eval_loop.run(
            lambda count: self._run_in_scope(self._loops["eval"], iterator, tf.constant(count, tf.int32)),
            _user_hooks(hooks, info), hooks_lib.RunContext(self.model_dir, ("loss",)),
            steps, self._config.steps_per_loop)
        results = eval_loop.results(totals, info.metric_results)
        results["global_step"] = int(self._model.global_step.numpy())
        eval_loop.write_results(self.model_dir, name, results, restored)
        return results

    # --------------------------------------------------------------- predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions: one dict (or array) per example, in input order.

        Hooks (these and the spec's prediction_hooks) see each batch's end as a step.
        """
        dataset = self._dataset(input_fn, ModeKeys.PREDICT)
        info = self._probe_dataset(ModeKeys.PREDICT, dataset)
        self._restore(ModeKeys.PREDICT, checkpoint_path)
        if "predict" not in self._loops:
            self._loops["predict"] = tf.function(self._step.predict_step, reduce_retracing=True)
        yield from predict_loop.run(
            lambda features: self._run_in_scope(self._loops["predict"], features), dataset,
            _user_hooks(hooks, info), hooks_lib.RunContext(self.model_dir, ()),
            predict_keys, info.predictions_dict, yield_single_examples)

    # ---------------------------------------------------------------- export
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, checkpoint_path=None):
        """Exports the latest checkpoint's model as a SavedModel; returns its path.

        Each signature runs model_fn in PREDICT mode on one device: one per
        export_outputs key (serving_default: the predictions, without them)
        and receiver alternative, with TensorFlow Serving's method names.
        """
        inputs = receivers.serving_inputs(serving_input_receiver_fn)
        default = inputs[receivers.DEFAULT_SIGNATURE]
        names = sorted(default.specs)
        info = self._model.probe(ModeKeys.PREDICT, tuple(default.specs[n] for n in names),
                                 lambda *received: (default.features_fn(dict(zip(names, received))), None))
        self._restore(ModeKeys.PREDICT, checkpoint_path)

        def outputs_fn(key):
            def outputs(features):
                spec = self._model.call(features, None, ModeKeys.PREDICT)
                if spec.export_outputs is None:
                    return spec.predictions if isinstance(spec.predictions, dict) else {"predictions": spec.predictions}
                return export.with_default(spec.export_outputs)[key].outputs()
            return outputs

        module = tf.Module()
        module.model_variables = [t.variable for t in self._model.model_variables]
        with self._model.scope():
            signatures, methods = export.signatures(inputs, export.with_default(info.export_outputs), outputs_fn)
        return export.write_saved_model(export_dir_base, module, signatures, methods)


def _user_hooks(hooks, info):
    """The caller's hooks and the spec's, TF1 SessionRunHooks wrapped to run here."""
    return session_run_hook.adapt_hooks(list(hooks or ()) + list(info.hooks))
