"""The absl flags every main shares, and the checks a main runs before it
touches model_dir or data.

Flag names are the official CIFAR-10 example's (absl spelling). A bad
value stops the program with a message naming the flag and the value, exit
status 1, and nothing created.
"""

import functools
import os
import sys
import tempfile

import tensorflow as tf
from absl import app, flags
from tensorflow.compat.v1 import logging

from common.devices import hosts, parameter_servers, precision, runtime
from common.devices.plan import VARIABLE_STRATEGIES, DevicePlanError, check_batch_size, make_device_plan
from common.engine import eval_loop
from common.estimator.run_config import RunConfig
from common.export import exporters
from common.hooks import signals
from common.hooks.profiler import ProfilerHook
from common.hooks.saving import HParamsHook
from common.hooks.stopping import NanLossDuringTrainingError
from common.state import model_dir_lock
from common.state.checkpoints import CheckpointDamagedError, CheckpointMismatchError, CheckpointWriteError
from common.training import early_stopping, train_eval

FLAGS = flags.FLAGS


def define_device_flags():
    """Towers, devices, threads, the compiled loop and profiling."""
    flags.DEFINE_integer("num_gpus", None, "GPU towers; default: every GPU TensorFlow finds (0 on a CPU machine).",
                         lower_bound=0)
    flags.DEFINE_enum("variable_strategy", "CPU", list(VARIABLE_STRATEGIES),
                      "Where variables live: CPU (all on /cpu:0) or GPU (spread over the towers).")
    flags.DEFINE_integer("cpu_towers", 0, "With --num_gpus=0: towers on this many logical CPU devices.",
                         lower_bound=0)
    flags.DEFINE_integer("split_gpu", 0, "Split GPU 0 into this many logical GPUs (--num_gpus=N on one card).",
                         lower_bound=0)
    flags.DEFINE_integer("split_gpu_memory_mb", 0, "Memory of each logical GPU with --split_gpu (0: share 90%).",
                         lower_bound=0)
    flags.DEFINE_integer("num_intra_threads", 0, "Threads inside an op (0: TensorFlow's choice).", lower_bound=0)
    flags.DEFINE_integer("num_inter_threads", 0, "Ops run at once (0: TensorFlow's choice).", lower_bound=0)
    flags.DEFINE_boolean("log_device_placement", False, "Log the device of every op.")
    flags.DEFINE_enum("data_format", "channels_last", ["channels_first", "channels_last"],
                      "Image layout (channels_last: what CPU convolutions take, and faster on an H100).")
    flags.DEFINE_integer("steps_per_loop", 10, "Training steps per compiled call (hooks fire between calls).",
                         lower_bound=1)
    flags.DEFINE_boolean("jit_compile", None, "Compile with XLA: the whole train step on one device, each tower's "
                         "forward and backward pass over several (default: on for GPU towers, where a model that "
                         "cannot compile per tower runs its towers plain; off on CPU).")
    flags.DEFINE_integer("random_seed", None, "Seed for weights, dropout, data order and augmentation.")
    flags.DEFINE_enum("dtype", "float32", list(precision.DTYPES),
                      "Compute dtype: float32, or mixed bfloat16 / float16 (with loss scaling), for GPUs.")
    flags.DEFINE_integer("cluster_start_timeout_secs", 600,
                         "With TF_CONFIG: how long to wait for every other task to start.", lower_bound=1)
    flags.DEFINE_integer("collective_timeout_secs", 600,
                         "With TF_CONFIG: a cross-host all-reduce waiting this long is an error.", lower_bound=1)
    flags.DEFINE_list("profile_steps", [], "FIRST,LAST: trace global steps FIRST to LAST with the TensorFlow "
                      "profiler into the model dir (TensorBoard's Profile tab).")
    flags.register_validator("profile_steps", _is_step_range,
                             "--profile_steps must be two global steps FIRST,LAST with 1 <= FIRST <= LAST")


MODES = ("train_and_evaluate", "train", "evaluate_continuously")


def define_service_flags():
    """The run's mode; gradient clipping; best-model export and early stopping, ruled by an eval metric."""
    flags.DEFINE_enum("mode", MODES[0], list(MODES), "train_and_evaluate: train, evaluating after each checkpoint; "
                      "train: train only (an evaluator evaluates); evaluate_continuously: be that evaluator, "
                      "evaluating each new checkpoint in the model dir once until training ends (as TF_CONFIG's "
                      "evaluator task does).")
    flags.DEFINE_float("clip_global_norm", None, "Scale each step's averaged gradients so their global norm is at "
                       "most this (common.clip_gradients_by_norm).")
    flags.register_validator("clip_global_norm", lambda value: value is None or value > 0,
                             "--clip_global_norm must be > 0")
    flags.DEFINE_string("export_best", None, "METRIC[:max|min]: keep SavedModels of the 5 best evaluations by this "
                        "eval metric in model_dir/export/best (max unless the metric is a loss or an error).")
    flags.DEFINE_string("early_stopping_metric", None, "METRIC[:max|min]: stop training once this eval metric has "
                        "not improved for --early_stopping_steps steps (max unless it is a loss or an error).")
    flags.DEFINE_integer("early_stopping_steps", 1000, "Steps without improvement that stop training.", lower_bound=0)
    flags.DEFINE_integer("early_stopping_min_steps", 0, "Evaluations before this step do not count for early "
                         "stopping.", lower_bound=0)


def _metric_rule(flag_name, value, eval_metrics):
    """(metric, higher_is_better) of a METRIC[:max|min] flag value."""
    metric, _, direction = value.partition(":")
    if metric not in eval_metrics:
        raise app.UsageError(f"--{flag_name}={value}: the evaluation reports {', '.join(eval_metrics)}")
    if direction not in ("", "max", "min"):
        raise app.UsageError(f"--{flag_name}={value}: the direction after ':' must be max or min")
    if direction:
        return metric, direction == "max"
    return metric, not any(word in metric for word in ("loss", "error"))


def train_and_evaluate_by_mode(estimator, train_spec, eval_spec):
    """common.train_and_evaluate, or, with --mode=train, training alone; returns
    (metrics, export paths) as it does ((None, []) after training alone)."""
    if FLAGS.mode == "train" and not estimator.is_evaluator:
        train_eval.train_on(estimator, train_spec)
        return None, []
    return train_eval.train_and_evaluate(estimator, train_spec, eval_spec)


def train_without_evaluation(estimator, train_spec, why):
    """Trains where there is nothing to evaluate (`why`: the flag that says so);
    an evaluator there is a usage error."""
    if estimator.is_evaluator:
        raise app.UsageError(f"the evaluator has nothing to evaluate with {why}")
    train_eval.train_on(estimator, train_spec)


def best_exporters(serving_input_receiver_fn, eval_name, eval_metrics):
    """[BestExporter "best"] for --export_best (eval_metrics: what the evaluation
    named eval_name reports; None: there is none), or []."""
    if not FLAGS.export_best:
        return []
    if eval_metrics is None:
        raise app.UsageError(f"--export_best={FLAGS.export_best} needs an evaluation during training")
    metric, higher = _metric_rule("export_best", FLAGS.export_best, eval_metrics)
    return [exporters.BestExporter(
        "best", serving_input_receiver_fn, compare_fn=exporters.metric_better(metric, higher),
        event_file_pattern=os.path.join(os.path.basename(eval_loop.eval_dir("", eval_name)), "*.tfevents.*"))]


def early_stopping_hooks(estimator, eval_name, eval_metrics):
    """[a stop_if_no_increase/decrease hook] for --early_stopping_metric, checked at every
    loop boundary (run_every_secs=0: it stops at the first one after the evaluation that triggers it), or []."""
    if not FLAGS.early_stopping_metric:
        return []
    if eval_metrics is None:
        raise app.UsageError(f"--early_stopping_metric={FLAGS.early_stopping_metric} needs an evaluation during "
                             "training")
    metric, higher = _metric_rule("early_stopping_metric", FLAGS.early_stopping_metric, eval_metrics)
    make = early_stopping.stop_if_no_increase_hook if higher else early_stopping.stop_if_no_decrease_hook
    return [make(estimator, metric, FLAGS.early_stopping_steps, eval_dir=estimator.eval_dir(eval_name),
                 min_steps=FLAGS.early_stopping_min_steps, run_every_secs=0, run_every_steps=None)]


def _is_step_range(values):
    if not values:
        return True
    try:
        first, last = (int(value) for value in values)
    except ValueError:
        return False
    return 1 <= first <= last


def hparams_hook():
    """A hooks.HParamsHook recording the main's flags and the shared ones (lists
    joined by commas, unset ones left out)."""
    values = {}
    for module, module_flags in FLAGS.flags_by_module_dict().items():
        if module in ("__main__", sys.argv[0], __name__):  # (absl files a main's flags under its path)
            for flag in module_flags:
                if flag.value is not None:
                    values[flag.name] = ",".join(map(str, flag.value)) if isinstance(flag.value, list) else flag.value
    return HParamsHook(values)


def profiler_hooks():
    """[hooks.ProfilerHook] for --profile_steps, or [] when it is not given."""
    if not FLAGS.profile_steps:
        return []
    first, last = (int(value) for value in FLAGS.profile_steps)
    return [ProfilerHook(first, last)]


def setup_devices():
    """Configures the runtime from the flags (and TF_CONFIG); returns the
    DevicePlan and the cluster of hosts (a LocalCluster without TF_CONFIG).

    Must run before anything else creates a tensor.
    """
    try:
        runtime.configure(FLAGS.cpu_towers, FLAGS.split_gpu, FLAGS.split_gpu_memory_mb,
                          FLAGS.num_intra_threads, FLAGS.num_inter_threads, FLAGS.log_device_placement)
        precision.set_compute_dtype(FLAGS.dtype)
        cluster = hosts.from_tf_config(FLAGS.collective_timeout_secs, FLAGS.cluster_start_timeout_secs)
        if FLAGS.mode == "evaluate_continuously" and not cluster.is_evaluator:
            if cluster.num_workers > 1:
                raise app.UsageError(f"--mode=evaluate_continuously runs outside the training cluster, but TF_CONFIG "
                                     f"makes this {cluster.task_type}:{cluster.task_id} of it")
            cluster = hosts.EvaluatorTask()
        num_gpus = FLAGS.num_gpus
        if num_gpus is None:
            num_gpus = 0 if FLAGS.cpu_towers else len(tf.config.list_logical_devices("GPU"))
        return make_device_plan(num_gpus, FLAGS.variable_strategy, FLAGS.cpu_towers), cluster
    except (DevicePlanError, hosts.ClusterConfigError) as error:
        raise app.UsageError(str(error)) from error


def check_batch_sizes(plan, **batch_sizes):
    """batch_sizes: flag name -> value; each must split evenly over the towers."""
    try:
        for flag_name, value in batch_sizes.items():
            check_batch_size(value, plan.num_towers, flag_name)
    except DevicePlanError as error:
        raise app.UsageError(str(error)) from error


def check_writable_dir(flag_name, path):
    """UsageError unless `path` is, or could be created as, a writable directory."""
    if not path:
        raise app.UsageError(f"--{flag_name} must name a directory")
    if "://" in path:  # gs://, hdfs://: trust the file system
        return
    probe = os.path.abspath(path)
    if os.path.exists(probe) and not os.path.isdir(probe):
        raise app.UsageError(f"--{flag_name}={path} is a file, not a directory")
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise app.UsageError(f"--{flag_name}={path} cannot be created: {probe} is a file")
    try:  # a real file: os.access says yes to root, and to /proc
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as error:
        raise app.UsageError(f"--{flag_name}={path} is not writable ({probe}: {error.strerror})") from error


def check_existing_dir(flag_name, path):
    if not path or not tf.io.gfile.isdir(path):
        raise app.UsageError(f"--{flag_name}={path} is not an existing directory")


def run_config(plan, cluster, model_dir, **settings):
    """A RunConfig carrying the shared flags (loop, XLA, seed, towers, cluster)."""
    return RunConfig(model_dir=model_dir, steps_per_loop=FLAGS.steps_per_loop, jit_compile=FLAGS.jit_compile,
                     tf_random_seed=FLAGS.random_seed, device_plan=plan, cluster=cluster, **settings)


def fail(message):
    """Stops the program with status 1 and one clear line on stderr."""
    sys.exit(f"ERROR: {message}")


def reporting_errors(main, *data_errors):
    """Wraps a main so that expected failures end the program with one clear
    line instead of a traceback: a usage error, a checkpoint of another model
    or none that loads, a model dir another run trains in, a diverged loss,
    a lost host or ps task, the package's data errors (status 1), or a stop signal
    during training, evaluation or export (128 + signal)."""

    @functools.wraps(main)
    def wrapped(argv):
        runtime.log_tensorflow_lines_once()  # (the job's choice: absl's handler prints TensorFlow's lines too)
        try:
            with signals.raising_stop_signals():
                return main(argv)
        except signals.StopSignal as stop:  # (training's TrainingInterrupted is a SystemExit of 128 + signal)
            logging.warning("%s", stop)
            sys.exit(stop.exit_status)
        except app.UsageError as error:  # absl would print the whole flag help above it
            fail(f"{error} (--helpfull lists every flag)")
        except (CheckpointDamagedError, CheckpointMismatchError, CheckpointWriteError, NanLossDuringTrainingError,
                model_dir_lock.ModelDirLockedError, hosts.ClusterStartError, hosts.WorkerLostError,
                parameter_servers.ParameterServerLostError, parameter_servers.ChiefLostError,
                *data_errors) as error:
            fail(str(error))

    return wrapped
