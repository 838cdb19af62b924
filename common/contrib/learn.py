"""tf.contrib.learn's run surface: Experiment, learn_runner.run, RunConfig, datasets, its own Estimator.

Before train_and_evaluate (TensorFlow 1.4), tf.estimator programs ran
through tf.contrib.learn: an experiment_fn(run_config, hparams) built an
Estimator and an `Experiment` around it, and `learn_runner.run` called the
schedule the task's role asked for ("train_and_evaluate" on one host). The
official CIFAR-10 estimator example ran so. Here the Experiment holds the
same pieces and runs them on this project's Estimator: `train` and
`evaluate` call it, `train_and_evaluate` trains to train_steps and then
evaluates eval_steps batches (returning (metrics, export results) as
Experiment did, its export strategies exporting after the evaluations),
`test` trains and evaluates one step each.
"""

import inspect

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.contrib import learn_datasets as datasets  # noqa: F401 -- contrib.learn.datasets, reached as learn.datasets
from common.contrib.learn_datasets import maybe_download  # noqa: F401 -- where earlier upgrades wrote it
from common.contrib.learn_estimator import Estimator, ModelFnOps, SKCompat  # noqa: F401 -- contrib.learn's names
from common.estimator.run_config import USE_DEFAULT
from common.estimator.run_config import RunConfig as _RunConfig
from common.export import exporters, receivers
from common.training import evaluator, train_eval


class ModeKeys:
    """contrib.learn's mode names: INFER is tf.estimator's PREDICT ("infer")."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


# contrib's RunConfig properties a user may change without changing what runs: what its uid() left out (the
# official CIFAR-10 example's RunConfig subclass reads it)
DEFAULT_UID_WHITE_LIST = ["tf_random_seed", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
                          "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                          "log_step_count_steps"]


class RunConfig(_RunConfig):
    """contrib.learn's RunConfig: this project's, built from contrib's arguments (a class, as programs
    subclassed it). The checkpoint, summary and seed settings carry over; the session's devices and
    threads (num_cores, gpu_memory_fraction, log_device_placement, master) are common.runtime.configure's
    and are ignored with a warning when given. contrib saved a checkpoint every 600 seconds unless told
    otherwise, as here."""

    def __init__(self, master=None, num_cores=0, log_device_placement=False, gpu_memory_fraction=1,
                 tf_random_seed=None, save_summary_steps=100, save_checkpoints_secs=USE_DEFAULT,
                 save_checkpoints_steps=USE_DEFAULT, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, protocol=None, evaluation_master="", model_dir=None, session_config=None,
                 **fields):
        given = {"master": master, "num_cores": num_cores, "log_device_placement": log_device_placement,
                 "gpu_memory_fraction": gpu_memory_fraction != 1, "protocol": protocol,
                 "evaluation_master": evaluation_master}
        ignored = [name for name, value in given.items() if value]
        if ignored:
            logging.warning("contrib.learn.RunConfig: %s ignored (threads and devices are set by "
                            "common.runtime.configure)", ", ".join(ignored))
        super().__init__(model_dir=model_dir, tf_random_seed=tf_random_seed, save_summary_steps=save_summary_steps,
                         save_checkpoints_steps=save_checkpoints_steps, save_checkpoints_secs=save_checkpoints_secs,
                         keep_checkpoint_max=keep_checkpoint_max,
                         keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                         log_step_count_steps=log_step_count_steps, session_config=session_config, **fields)


class Experiment:
    """contrib.learn's Experiment over this project's Estimator (see the module)."""

    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None, train_steps=None, eval_steps=100,
                 train_monitors=None, eval_hooks=None, local_eval_frequency=None, eval_delay_secs=120,
                 continuous_eval_throttle_secs=60, min_eval_frequency=None, delay_workers_by_global_step=False,
                 export_strategies=None, train_steps_per_iteration=None, checkpoint_and_export=False,
                 saving_listeners=None, check_interval_secs=5):
        del local_eval_frequency, delay_workers_by_global_step, train_steps_per_iteration, check_interval_secs
        if eval_metrics is not None:
            raise ValueError("Experiment: eval_metrics must be None with a tf.estimator Estimator (as contrib "
                             "said); return the metrics in EstimatorSpec(eval_metric_ops=...)")
        if checkpoint_and_export or saving_listeners:
            raise NotImplementedError("Experiment: checkpoint_and_export and saving_listeners are not supported; "
                                      "use common.train_and_evaluate with EvalSpec(exporters=...)")
        self.estimator = estimator
        self.train_input_fn, self.eval_input_fn = train_input_fn, eval_input_fn
        self.train_steps, self.eval_steps = train_steps, eval_steps
        self.train_hooks = list(train_monitors or [])
        self.eval_hooks = list(eval_hooks or [])
        self.eval_delay_secs = eval_delay_secs
        self.continuous_eval_throttle_secs = continuous_eval_throttle_secs
        self.min_eval_frequency = min_eval_frequency
        self.reset_export_strategies(export_strategies)

    def extend_train_hooks(self, additional_hooks):
        self.train_hooks.extend(additional_hooks)

    def reset_export_strategies(self, new_export_strategies=None):
        """Sets the export strategies (exporters: make_export_strategy's), returning the previous ones."""
        previous = getattr(self, "export_strategies", [])
        given = new_export_strategies or []
        self.export_strategies = list(given) if isinstance(given, (list, tuple)) else [given]
        return previous

    def train(self, delay_secs=None):
        del delay_secs  # a worker's start delay: one host trains at once
        return self.estimator.train(self.train_input_fn, max_steps=self.train_steps, hooks=self.train_hooks)

    def run_std_server(self):
        """A parameter-server job's ps task: it serves the chief's variables until the job ends (Estimator.train on
        a ps task serves)."""
        return self.train()

    def evaluate(self, delay_secs=None, name=None):
        del delay_secs
        return self.estimator.evaluate(self.eval_input_fn, steps=self.eval_steps, hooks=self.eval_hooks, name=name)

    def train_and_evaluate(self):
        """Trains to train_steps, then evaluates; (metrics, export results) as contrib returned them."""
        return train_eval.train_and_evaluate(
            self.estimator, train_eval.TrainSpec(self.train_input_fn, self.train_steps, self.train_hooks),
            train_eval.EvalSpec(self.eval_input_fn, self.eval_steps, hooks=self.eval_hooks,
                                exporters=self.export_strategies, throttle_secs=self.continuous_eval_throttle_secs))

    def continuous_eval(self):
        """The evaluator's schedule: each new checkpoint evaluated until training ends."""
        return evaluator.run_evaluator(
            self.estimator, train_eval.TrainSpec(self.train_input_fn, self.train_steps),
            train_eval.EvalSpec(self.eval_input_fn, self.eval_steps, hooks=self.eval_hooks,
                                throttle_secs=self.continuous_eval_throttle_secs))

    def test(self):
        """One training step and one evaluation step, as contrib's smoke test ran them."""
        self.estimator.train(self.train_input_fn, steps=1, hooks=self.train_hooks)
        return self.estimator.evaluate(self.eval_input_fn, steps=1, hooks=self.eval_hooks)


def make_export_strategy(serving_input_fn=None, default_output_alternative_key=None, assets_extra=None, as_text=False,
                         exports_to_keep=5, strip_default_attrs=None, export_input_fn=None):
    """contrib.learn's export strategy: after each evaluation, a SavedModel under model_dir/export/Servo/, the
    newest exports_to_keep kept (a LatestExporter named "Servo", as contrib named its strategy).
    export_input_fn: TensorFlow 1.0's name for serving_input_fn."""
    del default_output_alternative_key, strip_default_attrs  # (the export's default signature is serving_default)
    if (serving_input_fn is None) == (export_input_fn is None):
        raise ValueError("make_export_strategy: give serving_input_fn (or, as TensorFlow 1.0 named it, "
                         "export_input_fn), once")
    return exporters.LatestExporter("Servo", serving_input_fn or export_input_fn, assets_extra=assets_extra,
                                    as_text=as_text, exports_to_keep=exports_to_keep)


def InputFnOps(features, labels, default_inputs):  # noqa: N802 -- contrib.learn's namedtuple
    """contrib.learn's serving input (features, labels, the tensors a request feeds), whose features model_fn got
    as they were: a dict as a ServingInputReceiver's, else as a TensorServingInputReceiver's one tensor (a list
    of tensors as the tensor model_fn's ops made of it: tf.convert_to_tensor stacks it)."""
    del labels  # (a serving input has none)
    if isinstance(features, dict):
        return receivers.ServingInputReceiver(features, default_inputs)
    return receivers.TensorServingInputReceiver(tf.convert_to_tensor(features), default_inputs)


def _default_schedule(run_config):
    """contrib's schedule of the task: an evaluator's continuous evaluation, a parameter-server job's ps task's
    server and worker's training (each serving the chief here), else train_and_evaluate."""
    task_type = getattr(run_config, "task_type", None)
    if task_type == "evaluator":
        return "continuous_eval"
    if run_config is not None and run_config.num_ps_replicas and task_type in ("ps", "worker"):
        return "run_std_server" if task_type == "ps" else "train"
    return "train_and_evaluate"


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """learn_runner.run: builds the experiment (experiment_fn(run_config, hparams), or experiment_fn(output_dir)
    in the older form) and runs its schedule (by default the task's: train_and_evaluate on one host)."""
    if run_config is not None:
        if output_dir is not None:
            raise ValueError("learn_runner.run: give output_dir or run_config, not both")
        experiment = experiment_fn(run_config, hparams)
    else:
        if output_dir is None:
            raise ValueError("learn_runner.run: give output_dir (experiment_fn(output_dir)) or run_config")
        experiment = experiment_fn(output_dir)
    if not isinstance(experiment, Experiment):
        raise TypeError(f"learn_runner.run: experiment_fn returned a {type(experiment).__name__}, not an Experiment")
    schedule = schedule or _default_schedule(run_config)
    method = getattr(experiment, schedule, None)
    if method is None or schedule.startswith("_") or not inspect.ismethod(method):
        raise ValueError(f"learn_runner.run: schedule {schedule!r} is not one of the Experiment's: train, evaluate, "
                         "train_and_evaluate, continuous_eval, run_std_server, test")
    logging.info("Running the experiment's %s schedule", schedule)
    return method()
