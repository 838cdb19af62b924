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
from absl import logging

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
    """Trains, evaluates, predicts with and exports a model_fn.

    Args:
      model_fn: model_fn(features, labels, mode, params[, config]) ->
        EstimatorSpec. `labels`, `mode`, `params` and `config` may be left out
        of its signature.
      model_dir: where checkpoints, event files and exports go; defaults to
        config.model_dir, else a new temporary directory.
      config: a RunConfig.
      params: handed to model_fn and input_fn (a dict, or any object: TF1
        programs passed an HParams); a deep copy, as tf.estimator kept.
      warm_start_from: a checkpoint (prefix or directory) or a
        WarmStartSettings; used when model_dir has no checkpoint.
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
        config = config.replace(model_dir=model_dir)
        if isinstance(warm_start_from, str):
            warm_start_from = WarmStartSettings(warm_start_from)
        if warm_start_from is not None:
            checkpoints.resolve(warm_start_from.ckpt_to_initialize_from, "warm_start_from")
            re.compile(warm_start_from.vars_to_warm_start)
        params = copy.deepcopy(params) if params is not None else {}  # any object, copied as tf.estimator did
        model = ModelBuilder(model_fn, params, config, re.compile(frozen_variables) if frozen_variables else None)
        store = CheckpointStore(model_dir, config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours)
        self._parts = EstimatorParts(
            config=config, params=params, model=model,
            state=ModelState(model, store, warm_start_from, config.cluster.is_chief),
            step=TowerStep(model, config.device_plan, config.cluster, config.jit_compile),
            loops=loops.LoopCache())

    # ------------------------------------------------------------ properties
    @property
    def model_dir(self):
        return self._parts.config.model_dir

    @property
    def config(self):
        return self._parts.config

    @property
    def params(self):
        return copy.deepcopy(self._parts.params)

    @property
    def model_fn(self):
        """model_fn(features, labels, mode, config) with this estimator's params bound, as tf.estimator's
        property gave it (add_metrics wraps it)."""
        user_model_fn, params = self._parts.model.model_fn, self.params

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
        """{variable name: device} of every variable built so far (model,
        optimizer, global step), named as in checkpoints."""
        return {name: v.device for name, v in self._parts.model.named_state(with_optimizer=True).items()}

    def variable_values(self):
        """{name: numpy value} of every variable as it is in memory now: what this
        process trained, also on a host that keeps no checkpoint."""
        return {name: v.numpy() for name, v in self._parts.model.named_state(with_optimizer=True).items()}

    def eval_dir(self, name=None):
        """Where evaluate(name=...) writes its events: model_dir/eval, or eval_<name>."""
        return eval_loop.eval_dir(self.model_dir, name)

    def latest_checkpoint(self):
        return self._parts.state.store.latest()

    def get_variable_names(self):
        return sorted(checkpoints.variable_shapes(self._require_checkpoint()))

    def get_variable_value(self, name):
        return checkpoints.read_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        latest = self.latest_checkpoint()
        if not latest:
            raise ValueError(f"no checkpoint in model_dir {self.model_dir}; train first")
        return latest

    def _prepare(self, input_fn, mode, step_function, checkpoint_path=None, clock=None):
        """input_fn's dataset for `mode`, the mode's ProbeInfo (learnt by tracing step_function, the tf.function
        of the mode's step), and the restored checkpoint's path (or None); `clock` (a startup.StartupClock)
        times the first two."""
        parts = self._parts
        dataset = inputs.dataset_for_run(input_fn, mode, parts.params, parts.config)
        if clock:
            clock.lap("input_fn")
        info = parts.model.probe_dataset(mode, dataset, step_function)
        if clock:
            clock.lap("tracing model_fn")
        return dataset, info, parts.state.restore(mode, checkpoint_path, info)

    # ----------------------------------------------------------------- train
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
        # (a float, TOTAL_STEPS = SIZE / BATCH * EPOCHS: tf.estimator stopped at the first step >= it)
        steps, max_steps = (None if v is None else math.ceil(v) for v in (steps, max_steps))
        if self._parts.cluster.serves:  # a parameter-server job's ps or worker task
            self._parts.cluster.serve(self.model_dir)
            return self
        if self.is_chief:
            training_run.train(self, self._parts, input_fn, hooks, steps, max_steps, saving_listeners)
            return self
        with scratch_folders.worker_scratch(self._parts.cluster.worker_index) as scratch:
            logging.info("Not the chief: checkpoints and summaries go to %s, removed after training.", scratch)
            state = self._parts.state
            chief_store, state.store = state.store, CheckpointStore(scratch)
            try:
                training_run.train(self, self._parts, input_fn, hooks, steps, max_steps, saving_listeners)
            finally:
                state.store = chief_store
        return self

    # ------------------------------------------------------------------ eval
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates on `steps` batches (default: all of input_fn's data). Returns {metric: value, "loss": mean
        loss per example, "global_step": N} and writes them to model_dir/eval (or eval_<name>) for TensorBoard."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        parts = self._parts
        clock = startup.StartupClock("evaluate()")
        step = parts.loops.get("eval step", lambda: tf.function(parts.step.eval_step, autograph=False))
        dataset, info, restored = self._prepare(input_fn, ModeKeys.EVAL, step, checkpoint_path, clock)
        loop = parts.loops.get("eval", lambda: loops.make_eval_loop(step, info.totals))
        iterator = iter(dataset)
        info.reset_metrics()
        with signals.saying_what_stops(f"evaluate() of {restored or 'the initial model'}"), \
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
                    parts.config.steps_per_loop)
            finally:
                iterator = None  # (this frame keeps no hold on the input either)
        results = eval_loop.results(totals, info.metric_results)
        results["global_step"] = parts.model.global_step.numpy()  # an int64 numpy scalar, as tf.estimator's
        eval_loop.write_results(self.model_dir, name, results, restored)
        return results

    # --------------------------------------------------------------- predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions: one dict (or array) per example, in input order.

        Hooks (these and the spec's prediction_hooks) see each batch's end as a step.
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
        """Exports the latest checkpoint's model as a SavedModel; returns its path.

        With no checkpoint in model_dir (and no checkpoint_path), the warm-start checkpoint's model, as
        tf.estimator exported it; with neither, a ValueError, nothing written (tf.estimator's "Couldn't find
        trained model"), unless allow_untrained=True asks for the model as it starts, untrained.

        Each signature runs model_fn in PREDICT mode on one device: one per
        export_outputs key (serving_default: the predictions, without them)
        and receiver alternative, with TensorFlow Serving's method names.
        tf.estimator's arguments: assets_extra copied under assets.extra/,
        as_text writing saved_model.pbtxt; a training or evaluation graph
        (experimental_mode) is refused by name.
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
        """tf.compat.v1.estimator's name for export_saved_model, which TF1 programs call
        (strip_default_attrs: TF2's SavedModel writer always strips them)."""
        del strip_default_attrs
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)
