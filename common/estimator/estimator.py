"""`Estimator`: tf.estimator's train / evaluate / predict / export on TF2.

A façade: each method assembles its parts and hands the work on.
  - common.engine.model_builder calls model_fn and owns the variables its
    first call builds;
  - common.engine.step runs one step over the towers, common.engine.loops
    several per compiled call;
  - common.engine.train_loop, eval_loop and predict_loop are the outer
    loops, the hooks (common.hooks) and their triggers saying what happens
    between calls; common.estimator.training_run assembles a train() call;
  - common.estimator.model_state restores what each mode needs, and
    common.state names, saves and restores checkpoints.
Nothing is written to model_dir before model_fn's spec has been checked.
"""

import copy
import math
import re
import tempfile

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.adapters import model_fns, tensor_inputs
from common.devices.plan import DevicePlan
from common.engine import eval_loop, first_steps, inputs, loops, predict_loop, startup
from common.engine.model_builder import ModelBuilder
from common.engine.step import TowerStep
from common.estimator import export_run, training_run
from common.estimator.model_state import ModelState
from common.estimator.parts import EstimatorParts, user_hooks
from common.estimator.run_config import RunConfig
from common.export import preflight, saved_model
from common.hooks import signals
from common.hooks.protocol import RunContext
from common.spec.model_fn import ModeKeys, call_with_wanted_args
from common.state import checkpoints
from common.state import scratch as scratch_folders
from common.state.checkpoint_store import CheckpointStore
from common.state.warm_start import WarmStartSettings


class Estimator:
    """Trains, evaluates, predicts with and exports a model_fn, as tf.estimator.Estimator did, over towers.

    model_fn is written for one tower; each batch is split over the towers of
    config's device plan, each tower's gradients are averaged on the device
    that holds each variable, and the update is applied once. Nothing is
    written to model_dir until model_fn's spec has been checked.

    Args:
      model_fn: model_fn(features, labels, mode, params, config) -> EstimatorSpec; `labels`, `mode`, `params`
        and `config` may be left out of its signature. It may also return what tf.estimator took: TF1 metric
        pairs, summaries written in it, a TF1 optimizer's train_op (common.adapters).
      model_dir: where checkpoints, event files and exports go; default config.model_dir, else a new
        temporary directory (with a warning).
      config: a RunConfig (default RunConfig()): towers, checkpoint and summary schedule, cluster.
      params: handed to model_fn and input_fn where they name `params`: a dict, or any object (TF1 programs
        passed an HParams); the Estimator keeps a deep copy, as tf.estimator did.
      warm_start_from: a checkpoint (a prefix or a directory) or a WarmStartSettings: the model starts from
        it when model_dir has no checkpoint.
      frozen_variables: a regex (re.match) of the variable names not to train; None trains them all.
    Raises:
      ValueError: model_dir and config.model_dir differ; warm_start_from names no checkpoint; model_fn has
        no `features` argument.
      re.error: frozen_variables or warm_start_from's vars_to_warm_start is not a regex.
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
        config = config.replace(model_dir=model_dir)
        replicated = getattr(model_fn, "replicated_plan", None)  # (contrib's replicate_model_fn: its towers)
        if replicated is not None and config.device_plan == DevicePlan.single_cpu():  # (RunConfig's default)
            config = config.replace(device_plan=replicated())
        logging.info("Using config: %s", config.as_tf_estimator_logged_it())  # (tf.estimator's line)
        if isinstance(warm_start_from, str):
            warm_start_from = WarmStartSettings(warm_start_from)
        if warm_start_from is not None:
            checkpoints.resolve(warm_start_from.ckpt_to_initialize_from, "warm_start_from")
            wanted = warm_start_from.vars_to_warm_start  # (a regex, a list of them, or None)
            for pattern in [wanted] if isinstance(wanted, str) else wanted or ():
                re.compile(pattern)
        params = copy.deepcopy(params) if params is not None else {}  # any object, copied as tf.estimator did
        model = ModelBuilder(model_fns.adapt(model_fn), params, config,
                             re.compile(frozen_variables) if frozen_variables else None)
        self._model_fn = model_fn
        store = CheckpointStore(model_dir, config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours)
        self._parts = EstimatorParts(
            config=config, params=params, model=model,
            state=ModelState(model, store, warm_start_from, config.cluster.is_chief),
            step=TowerStep(model, config.device_plan, config.cluster, config.jit_compile),
            loops=loops.LoopCache())

    # ------------------------------------------------------------ properties
    @property
    def model_dir(self):
        """The directory of this Estimator's checkpoints, event files and exports."""
        return self._parts.config.model_dir

    @property
    def config(self):
        """The RunConfig, its model_dir set to this Estimator's."""
        return self._parts.config

    @property
    def params(self):
        """A copy of the params model_fn and input_fn are given."""
        return copy.deepcopy(self._parts.params)

    @property
    def model_fn(self):
        """model_fn(features, labels, mode, config) with this Estimator's params bound, as tf.estimator's
        property gave it (add_metrics wraps it): the model_fn as the user wrote it."""
        user_model_fn, params = self._model_fn, self.params

        def public_model_fn(features, labels, mode, config):
            return call_with_wanted_args(user_model_fn, {"features": features},
                                         {"labels": labels, "mode": mode, "params": params, "config": config})
        return public_model_fn

    @property
    def warm_start_from(self):
        """The WarmStartSettings given (a path given becomes one), or None."""
        return self._parts.state.warm_start_settings

    @property
    def is_chief(self):
        """True unless this is a non-chief host of a multi-host cluster."""
        return self._parts.cluster.is_chief

    @property
    def is_evaluator(self):
        """True on TF_CONFIG's evaluator task (train_and_evaluate then only evaluates)."""
        return self._parts.cluster.is_evaluator

    @property
    def variable_placement(self):
        """(name, bytes, device) of each variable spread by the GPU strategy."""
        return self._parts.model.variable_placement

    def variable_devices(self):
        """Where each variable lives, as --variable_strategy placed it.

        Returns:
          {variable name: device string} of every variable built so far (model, optimizer state, global step),
          named as in checkpoints; {} before the first call of model_fn.
        """
        return {name: v.device for name, v in self._parts.model.named_state(with_optimizer=True).items()}

    def variable_values(self):
        """The variables as they are in memory now: what this process trained, also on a host that keeps no
        checkpoint.

        Returns:
          {variable name: numpy value} of every variable built so far, named as in checkpoints.
        """
        return {name: v.numpy() for name, v in self._parts.model.named_state(with_optimizer=True).items()}

    def eval_dir(self, name=None):
        """Where evaluate() writes its events, as tf.estimator's eval_dir.

        Args:
          name: the evaluation's name (evaluate's `name`), or None.
        Returns:
          model_dir/eval, or model_dir/eval_<name>.
        """
        return eval_loop.eval_dir(self.model_dir, name)

    def latest_checkpoint(self):
        """The newest checkpoint in model_dir that loads (a damaged newer one is passed over, with a warning).

        Returns:
          Its path prefix (".../model.ckpt-N"), or None when model_dir holds none.
        """
        return self._parts.state.store.latest()

    def get_variable_names(self):
        """The variables of the latest checkpoint, as tf.estimator's get_variable_names.

        Returns:
          Their names, sorted.
        Raises:
          ValueError: model_dir holds no checkpoint.
        """
        return sorted(checkpoints.variable_shapes(self._require_checkpoint()))

    def get_variable_value(self, name):
        """A variable's value in the latest checkpoint, as tf.estimator's get_variable_value.

        Args:
          name: the variable's name, as get_variable_names() lists it.
        Returns:
          Its value, a numpy array.
        Raises:
          ValueError: model_dir holds no checkpoint, or none of that name.
        """
        return checkpoints.read_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        latest = self.latest_checkpoint()
        if not latest:
            raise ValueError(f"no checkpoint in model_dir {self.model_dir}; train first")
        return latest

    def _prepare(self, input_fn, mode, step_function, checkpoint_path=None, clock=None, before_restore=None,
                 restore=True):
        """input_fn's dataset for `mode`, the mode's ProbeInfo (learnt by tracing step_function, the tf.function
        of the mode's step), and the restored checkpoint's path (or None; restore=False: the model as it is in
        memory, None); `clock` (a startup.StartupClock) times the first two; before_restore() is called between
        the probe and the restore."""
        parts = self._parts
        dataset = inputs.dataset_for_run(tensor_inputs.dataset_source(input_fn), mode, parts.params, parts.config)
        if clock:
            clock.lap("input_fn")
        info = parts.model.probe_dataset(mode, dataset, step_function)
        if clock:
            clock.lap("tracing model_fn")
        if before_restore:
            before_restore()
        return dataset, info, parts.state.restore(mode, checkpoint_path, info) if restore else None

    # ----------------------------------------------------------------- train
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains model_fn on input_fn's batches, split over the towers, resuming from model_dir's checkpoint.

        Checkpoints are saved every config.save_checkpoints_steps (or _secs) and at the end, summaries every
        save_summary_steps, and every log_step_count_steps the loss and global_step/sec are logged, as
        tf.estimator did. SIGTERM or SIGINT saves a checkpoint at the current step and stops.

        Args:
          input_fn: input_fn(params, mode, config, input_context), any of them left out of its signature,
            returning a tf.data.Dataset of (features, labels) batches or of features alone; or what
            tf.estimator took: tensors, an iterator's get_next(), a queue-runner pipeline (common.adapters).
            Each batch is split over the towers: its size must be a multiple of their number.
          hooks: common.hooks.Hook objects (or TF1 SessionRunHooks) run between calls of the compiled loop,
            besides the standard ones and the spec's training_hooks.
          steps: train this many steps more (a float is rounded up); None: until max_steps or the input's end.
          max_steps: train up to this global step (a float is rounded up); a model already there trains no step.
          saving_listeners: objects with after_save(estimator, step) (or TF1 CheckpointSaverListeners), called
            after each checkpoint: train_and_evaluate evaluates there.
        Returns:
          self.
        Raises:
          ValueError: both steps and max_steps are given, or one is not positive; model_fn's spec cannot train.
          common.CheckpointMismatchError: model_dir holds a checkpoint of another model.
          common.CheckpointDamagedError: no checkpoint in model_dir loads.
          common.VariableCreationError: a call of model_fn creates a variable the first call did not.
          common.hooks.NanLossDuringTrainingError: the loss became NaN or infinite (the newest checkpoint is
            the last finite one).
          common.state.model_dir_lock.ModelDirLockedError: another process trains in model_dir.
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise ValueError(f"Must specify {name} > 0, given: {value}")
        # (a float, TOTAL_STEPS = SIZE / BATCH * EPOCHS: tf.estimator stopped at the first step >= it)
        steps, max_steps = (None if v is None else math.ceil(v) for v in (steps, max_steps))
        source = tensor_inputs.dataset_source(input_fn)
        if self._parts.cluster.serves:  # a parameter-server job's ps or worker task
            self._parts.cluster.serve(self.model_dir)
            return self
        if self.is_chief:
            training_run.train(self, self._parts, source, hooks, steps, max_steps, saving_listeners)
            return self
        with scratch_folders.worker_scratch(self._parts.cluster.worker_index) as scratch:
            logging.info("Not the chief: checkpoints and summaries go to %s, removed after training.", scratch)
            state = self._parts.state
            chief_store, state.store = state.store, CheckpointStore(scratch)
            try:
                training_run.train(self, self._parts, source, hooks, steps, max_steps, saving_listeners)
            finally:
                state.store = chief_store
        return self

    # ------------------------------------------------------------------ eval
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model of a checkpoint on input_fn's batches, its metrics summed over towers and batches.

        Args:
          input_fn: as for train(); the mode it is called in is EVAL.
          steps: evaluate this many batches; None: until the input ends.
          hooks: common.hooks.Hook objects (or TF1 SessionRunHooks), besides the spec's evaluation_hooks.
          checkpoint_path: the checkpoint to evaluate; None: the latest one in model_dir (with none, the model
            as it starts, as tf.estimator evaluated it).
          name: the evaluation's name: its events go to model_dir/eval_<name> (model_dir/eval without one).
        Returns:
          {metric name: value, "loss": the mean loss per example, "global_step": the checkpoint's step (a numpy
          int64)}, also written as events for TensorBoard.
        Raises:
          ValueError: steps is not positive; model_fn's spec cannot evaluate.
          common.CheckpointMismatchError: the checkpoint is of another model.
        """
        return self._evaluate(input_fn, steps, hooks, checkpoint_path, name)

    def _evaluate_in_memory(self, input_fn, steps=None, hooks=None, name=None):
        """evaluate() of the model as training holds it now, no checkpoint read (InMemoryEvaluatorHook's).
        Raises ValueError where this Estimator has not built its model (another one is training)."""
        if not self._parts.model.built:
            raise ValueError(f"InMemoryEvaluatorHook: its estimator (model_dir {self.model_dir}) holds no model in "
                             "memory: give the hook the Estimator object that trains (one add_metrics or another "
                             "wrapper returned is another object)")
        return self._evaluate(input_fn, steps, hooks, None, name, in_memory=True)

    def _evaluate(self, input_fn, steps, hooks, checkpoint_path, name, in_memory=False):
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        parts = self._parts
        clock = startup.StartupClock("evaluate()")
        step = parts.loops.get("eval step", lambda: tf.function(parts.step.eval_step, autograph=False))
        started = []
        dataset, info, restored = self._prepare(input_fn, ModeKeys.EVAL, step, checkpoint_path, clock,
                                                lambda: started.append(eval_loop.starting()), not in_memory)
        loop = parts.loops.get("eval", lambda: loops.make_eval_loop(step, info.totals))
        iterator = iter(dataset)
        info.reset_metrics()
        evaluated = "the model in memory" if in_memory else restored or "the initial model"
        with signals.saying_what_stops(f"evaluate() of {evaluated}"), \
                loops.releasing_failed_frames(), first_steps.FirstStepsWhileCompiling(
                    loop, step, iterator, first_steps.steps_to_go(dataset, steps),
                    parts.config.steps_per_loop) as calls:
            trace = None if calls.first_step_alone else (lambda: parts.run_in_scope(loop.trace, iterator))

            def fetch(named):  # (one batch, with the tensors of model_fn's graph hooks ask for)
                return parts.run_in_scope(parts.loops.get(("eval fetch", named), lambda: loops.make_fetching_step(
                    lambda batch: parts.step.eval_step(batch, named))), iterator)
            run_batches = startup.timing_first_call(eval_loop.fetching_last(
                lambda count: parts.run_in_scope(calls, count), fetch), clock, trace, ("batch", "batches"))
            try:
                totals = eval_loop.run(run_batches, user_hooks(hooks, info), RunContext(
                    self.model_dir, ("loss", "global_step"), graph_tensors=info.graph_tensors, evaluation=True,
                    global_step=parts.model.global_step, tf1_collections=info.tf1_collections), steps,
                    parts.config.steps_per_loop, started[0])
            finally:
                iterator = None  # (this frame keeps no hold on the input either)
        results = eval_loop.results(totals, info.metric_results)
        results["global_step"] = parts.model.global_step.numpy()  # an int64 numpy scalar, as tf.estimator's
        eval_loop.write_results(self.model_dir, name, results, restored)
        return results

    # --------------------------------------------------------------- predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Predicts with the model of a checkpoint, lazily, in input order.

        Args:
          input_fn: as for train(); the mode it is called in is PREDICT, and labels, if it gives them, are dropped.
          predict_keys: the keys of the spec's predictions dict to yield (a string or a list); None: all.
          hooks: common.hooks.Hook objects (or TF1 SessionRunHooks), besides the spec's prediction_hooks; each
            batch's end is a step to them.
          checkpoint_path: the checkpoint to predict with; None: the latest one in model_dir.
          yield_single_examples: yield one prediction per example (True), or one per batch.
        Yields:
          A dict of numpy values (or one array, when the spec's predictions are one tensor) per example, or per
          batch with yield_single_examples=False.
        Raises:
          ValueError: predict_keys names a key the predictions lack; model_fn's spec cannot predict.
        """
        parts = self._parts
        step = parts.loops.get("predict", lambda: tf.function(parts.step.predict_step, reduce_retracing=True,
                                                              autograph=False))
        dataset, info, _ = self._prepare(input_fn, ModeKeys.PREDICT, step, checkpoint_path)
        yield from predict_loop.run(
            lambda features: parts.run_in_scope(step, features), dataset,
            user_hooks(hooks, info), RunContext(self.model_dir, (), global_step=parts.model.global_step,
                                                tf1_collections=info.tf1_collections),
            predict_keys, info.predictions_dict, yield_single_examples)

    # ---------------------------------------------------------------- export
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=ModeKeys.PREDICT, *, allow_untrained=False):
        """Exports a checkpoint's model as a SavedModel, for TensorFlow Serving and tf.saved_model.load.

        Each signature runs model_fn in PREDICT mode on one device: one per export_outputs key
        (serving_default: the predictions, when the spec names none) and receiver alternative, with
        TensorFlow Serving's method names (classify, regress, predict). The SavedModel is written to a
        temporary folder and renamed into place: an export is whole or absent.

        Args:
          export_dir_base: the folder under which the export gets a new timestamped folder.
          serving_input_receiver_fn: a function of no argument returning a ServingInputReceiver (or
            TensorServingInputReceiver): what the signatures take and how it becomes features
            (build_raw_serving_input_receiver_fn, build_parsing_serving_input_receiver_fn).
          assets_extra: {destination path under assets.extra/: source path} of files copied into the export.
          as_text: also write saved_model.pbtxt, as tf.estimator did.
          checkpoint_path: the checkpoint to export; None: the latest in model_dir, else the warm-start
            checkpoint's model, as tf.estimator exported it.
          experimental_mode: only ModeKeys.PREDICT: a training or evaluation graph is refused by name.
          allow_untrained: with no checkpoint at all, export the model as it starts, untrained (otherwise a
            ValueError, as tf.estimator's "Couldn't find trained model").
        Returns:
          The export's path: a str that also answers .decode(), as tf.estimator's bytes did.
        Raises:
          NotImplementedError: experimental_mode is not PREDICT.
          TypeError: as_text is not a bool.
          ValueError: no checkpoint to export (and not allow_untrained); the receiver's features do not fit
            model_fn.
        """
        saved_model.check_write_options("export_saved_model", assets_extra, as_text)
        if experimental_mode != ModeKeys.PREDICT:
            raise NotImplementedError(f"export_saved_model: experimental_mode={experimental_mode!r} is not supported; "
                                      f"a SavedModel here serves {ModeKeys.PREDICT!r} signatures only")
        checkpoint_path = preflight.checkpoint_to_export(checkpoint_path, self.latest_checkpoint(),
                                                         self.warm_start_from, self.model_dir, allow_untrained)
        return export_run.export(self._parts, export_dir_base, serving_input_receiver_fn, checkpoint_path,
                                 assets_extra, as_text)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                          checkpoint_path=None, strip_default_attrs=False):
        """tf.compat.v1.estimator's name for export_saved_model, which TF1 programs call.

        Args:
          export_dir_base: as for export_saved_model.
          serving_input_receiver_fn: as for export_saved_model.
          assets_extra: as for export_saved_model.
          as_text: as for export_saved_model.
          checkpoint_path: as for export_saved_model.
          strip_default_attrs: ignored: TF2's SavedModel writer always strips them.
        Returns:
          The export's path, as export_saved_model.
        """
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)
