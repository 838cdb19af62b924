"""Train the MNIST CNN, validate while training, test, export a SavedModel.

    python -m mnist.main                        # the packaged MNIST, default flags
    python -m mnist.main --data_dir=DIR --model_dir=DIR --num_gpus=2
    python -m mnist.main --num_gpus=0 --cpu_towers=2

A second run on the same model_dir resumes from its latest checkpoint.
"""

import os
import tempfile

import tensorflow as tf
from absl import app, flags, logging

import common
from common import hooks
from common.jobs import cli, optimizers, process, schedules
from mnist import input_fn, model_fn

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", input_fn.PACKAGED_DATA_DIR,
                    "IDX files (gz or raw) or mnist.npz; default: the MNIST shipped with the package.")
flags.DEFINE_string("model_dir", os.path.join(tempfile.gettempdir(), "mnist_model"),
                    "Checkpoints, event files and the export.")
flags.DEFINE_integer("train_steps", 2000, "Global steps to train to.", lower_bound=1)
flags.DEFINE_integer("train_batch_size", 128, "Global training batch (split over the towers).", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 500, "Global evaluation batch.", lower_bound=1)
flags.DEFINE_float("learning_rate", 3e-3, "Initial learning rate.", lower_bound=0)
flags.DEFINE_enum("optimizer", "adam", list(optimizers.OPTIMIZERS), "adam or momentum SGD.")
flags.DEFINE_float("momentum", 0.9, "Momentum for --optimizer=momentum.", lower_bound=0)
flags.DEFINE_enum("lr_schedule", "exponential", list(schedules.SCHEDULES), "Learning-rate schedule.")
flags.DEFINE_integer("decay_steps", 1000, "exponential: steps per decay_rate factor.", lower_bound=1)
flags.DEFINE_float("decay_rate", 0.1, "exponential: the factor every decay_steps.", lower_bound=0)
flags.DEFINE_list("lr_boundaries", [], "piecewise: steps where the rate changes.")
flags.DEFINE_list("lr_multipliers", [], "piecewise: learning_rate multipliers, one more than boundaries.")
flags.DEFINE_float("validation_fraction", 0.2, "Share of the training file held out for validation.",
                   lower_bound=0, upper_bound=0.99)
flags.DEFINE_float("label_smoothing", 0.1, "Label smoothing of the cross-entropy.", lower_bound=0, upper_bound=1)
flags.DEFINE_integer("eval_every_steps", 1000, "Checkpoint and validate every this many steps.", lower_bound=1)
cli.define_device_flags()
cli.define_service_flags()
flags.adopt_module_key_flags(cli)  # (--help lists the shared flags with the job's own)
FLAGS.set_default("random_seed", 0)  # the defaults reproduce the measured accuracy


def _schedule_params():
    try:
        boundaries = [int(b) for b in FLAGS.lr_boundaries]
        multipliers = [float(m) for m in FLAGS.lr_multipliers]
    except ValueError as error:
        raise app.UsageError(f"--lr_boundaries/--lr_multipliers must be numbers: {error}") from error
    params = dict(lr_schedule=FLAGS.lr_schedule, learning_rate=FLAGS.learning_rate,
                  decay_steps=FLAGS.decay_steps, decay_rate=FLAGS.decay_rate,
                  lr_boundaries=boundaries, lr_multipliers=multipliers)
    try:
        model_fn.learning_rate_schedule(params)
    except ValueError as error:
        raise app.UsageError(f"--lr_schedule={FLAGS.lr_schedule}: {error}") from error
    return params


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if not tf.io.gfile.exists(FLAGS.data_dir):
        raise app.UsageError(f"--data_dir={FLAGS.data_dir} does not exist")
    cli.check_writable_dir("model_dir", FLAGS.model_dir)
    schedule = _schedule_params()
    plan, cluster = cli.setup_devices()
    cli.check_batch_sizes(plan, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size)
    data = input_fn.load(FLAGS.data_dir)
    splits = input_fn.subsets(data, FLAGS.validation_fraction, seed=FLAGS.random_seed)
    logging.info("Data from %s: %d train, %d validation, %d test images of %s, %d classes; towers: %s",
                 data.source, len(splits["train"][1]), len(splits["validation"][1]), len(splits["test"][1]),
                 "x".join(map(str, data.image_shape)), data.num_classes, ", ".join(plan.tower_devices))

    params = dict(schedule, num_classes=data.num_classes, data_format=FLAGS.data_format,
                  optimizer=FLAGS.optimizer, momentum=FLAGS.momentum, label_smoothing=FLAGS.label_smoothing,
                  clip_global_norm=FLAGS.clip_global_norm)
    config = cli.run_config(plan, cluster, FLAGS.model_dir, save_checkpoints_steps=FLAGS.eval_every_steps)
    estimator = common.Estimator(model_fn.model_fn, config=config, params=params)
    receiver = common.build_raw_serving_input_receiver_fn(
        tf.TensorSpec([None, *data.image_shape, 1], tf.float32, name="image"))
    validating = len(splits["validation"][1]) > 0
    eval_metrics = ("accuracy", "loss") if validating else None
    train_hooks = [
        hooks.ExamplesPerSecondHook(FLAGS.train_batch_size, every_n_steps=100),
        hooks.LoggingTensorHook(["learning_rate", "loss"], every_n_iter=100),
        *cli.profiler_hooks(),
        *cli.early_stopping_hooks(estimator, "validation", eval_metrics),
        cli.hparams_hook(),
    ]
    train_spec = common.TrainSpec(
        input_fn.input_fn(*splits["train"], FLAGS.train_batch_size, training=True, seed=FLAGS.random_seed),
        max_steps=FLAGS.train_steps, hooks=train_hooks)
    exporters = cli.best_exporters(receiver, "validation", eval_metrics)
    if validating:
        cli.train_and_evaluate_by_mode(estimator, train_spec, common.EvalSpec(
            input_fn.input_fn(*splits["validation"], FLAGS.eval_batch_size, training=False),
            steps=None, name="validation", throttle_secs=0, start_delay_secs=0, exporters=exporters))
    else:
        cli.train_without_evaluation(estimator, train_spec, "--validation_fraction=0")
    if not estimator.is_chief:
        return

    test = estimator.evaluate(input_fn.input_fn(*splits["test"], FLAGS.eval_batch_size, training=False), name="test")
    print(f"Test accuracy: {test['accuracy']:.4f} on {len(splits['test'][1])} images "
          f"(global step {test['global_step']})", flush=True)
    export_dir = estimator.export_saved_model(os.path.join(FLAGS.model_dir, "export"), receiver)
    print(f"SavedModel: {export_dir}", flush=True)


if __name__ == "__main__":
    process.run(cli.reporting_errors(main, input_fn.DataFileError))
