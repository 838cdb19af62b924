"""ResNet on CIFAR-10 with multi-tower data parallelism: the official estimator example on TF2.

    python -m cifar10.generate_cifar10_tfrecords --data_dir=DIR
    python -m cifar10.main --data_dir=DIR --job_dir=DIR --num_gpus=2 --variable_strategy=GPU
    python -m cifar10.main --job_dir=DIR --synthetic_data --train_steps=100   # throughput, no data set

Flags keep the official names; --cpu_towers=N runs N towers on logical CPU
devices, --split_gpu=N makes N logical GPUs of one card.
"""

import os

import tensorflow as tf
from absl import app, flags, logging

import common
from common.devices import parameter_servers
from cifar10 import input_fn, model_fn, resnet
from common import hooks
from common.jobs import cli, optimizers, process

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Directory with train/validation/eval.tfrecords.")
flags.DEFINE_string("job_dir", None, "Directory for checkpoints, event files and the export.")
flags.DEFINE_integer("num_layers", 44, "ResNet depth, 6n+2.", lower_bound=8)
flags.DEFINE_integer("train_steps", 80000, "Global steps to train to.", lower_bound=1)
flags.DEFINE_integer("train_batch_size", 128, "Global training batch, split over the towers.", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 100, "Global evaluation batch.", lower_bound=1)
flags.DEFINE_integer("eval_steps", None, "Evaluation batches (default: the whole eval file).", lower_bound=1)
flags.DEFINE_float("momentum", 0.9, "Momentum for MomentumOptimizer.", lower_bound=0)
flags.DEFINE_float("weight_decay", 2e-4, "Weight decay on every trainable variable.", lower_bound=0)
flags.DEFINE_float("learning_rate", 0.1, "Initial learning rate (decays by --lr_schedule).", lower_bound=0)
flags.DEFINE_enum("lr_schedule", "piecewise", list(model_fn.LR_SCHEDULES),
                  "piecewise: x1, x0.1, x0.01, x0.002 at 82, 123, 300 epochs; exponential: see decay flags.")
flags.DEFINE_integer("decay_steps", 10000, "exponential: steps per --decay_rate factor.", lower_bound=1)
flags.DEFINE_float("decay_rate", 0.1, "exponential: factor every --decay_steps.", lower_bound=0)
flags.DEFINE_enum("optimizer", "momentum", list(optimizers.OPTIMIZERS), "momentum SGD (official) or adam.")
flags.DEFINE_boolean("use_distortion_for_training", True, "Pad, random crop and flip training images.")
flags.DEFINE_boolean("sync", False, "Synchronous training across the chief and workers of TF_CONFIG; without it "
                     "TF_CONFIG needs ps tasks (asynchronous, the official default); one host is always synchronous.")
flags.DEFINE_float("batch_norm_decay", 0.997, "Decay for batch norm moving averages.", lower_bound=0, upper_bound=1)
flags.DEFINE_float("batch_norm_epsilon", 1e-5, "Epsilon for batch norm.", lower_bound=0)
flags.DEFINE_boolean("synthetic_data", False, "Random images of the right shape instead of --data_dir.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Checkpoint (and evaluate) every this many steps.",
                     lower_bound=1)
cli.define_device_flags()
cli.define_service_flags()
flags.adopt_module_key_flags(cli)  # (--help lists the shared flags with the job's own)


def _check_flags():
    if not FLAGS.job_dir:
        raise app.UsageError("--job_dir is required")
    cli.check_writable_dir("job_dir", FLAGS.job_dir)
    if not FLAGS.synthetic_data:
        cli.check_existing_dir("data_dir", FLAGS.data_dir)
    try:
        resnet.check_num_layers(FLAGS.num_layers)
    except ValueError as error:
        raise app.UsageError(str(error)) from error


def model_params(batches_per_epoch):
    """model_fn's params from the flags."""
    return dict(num_layers=FLAGS.num_layers, data_format=FLAGS.data_format,
                batch_norm_decay=FLAGS.batch_norm_decay, batch_norm_epsilon=FLAGS.batch_norm_epsilon,
                weight_decay=FLAGS.weight_decay, optimizer=FLAGS.optimizer, momentum=FLAGS.momentum,
                clip_global_norm=FLAGS.clip_global_norm,
                learning_rate=FLAGS.learning_rate, lr_schedule=FLAGS.lr_schedule,
                batches_per_epoch=batches_per_epoch, decay_steps=FLAGS.decay_steps, decay_rate=FLAGS.decay_rate)


def _serving_input_receiver_fn():
    """float32 images in [0, 255] by default; a `serving_uint8` signature takes uint8."""
    image = tf.TensorSpec([None, input_fn.HEIGHT, input_fn.WIDTH, input_fn.DEPTH], tf.float32)
    as_uint8 = common.ServingInputReceiver(
        lambda received: tf.cast(received["image"], tf.float32), {"image": tf.TensorSpec(image.shape, tf.uint8)})
    return common.ServingInputReceiver(
        lambda received: received["image"], {"image": image}, {"serving_uint8": as_uint8})


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    _check_flags()
    plan, cluster = cli.setup_devices()
    cli.check_batch_sizes(plan, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size)
    if cluster.num_workers > 1 and not FLAGS.sync:
        raise app.UsageError(
            f"TF_CONFIG names {cluster.num_workers} workers and no ps tasks but --sync is off: asynchronous "
            "training keeps its variables on ps tasks; name them in TF_CONFIG, or pass --sync to train "
            "synchronously across the workers")
    if FLAGS.sync and isinstance(cluster, (parameter_servers.ParameterServerCluster, parameter_servers.ServingTask)):
        raise app.UsageError("--sync trains the chief and workers together, but TF_CONFIG names ps tasks, which "
                             "asynchronous training uses: leave --sync out, or the ps tasks out of TF_CONFIG")
    synthetic = FLAGS.synthetic_data
    train_examples = 50000 if synthetic else input_fn.preflight(FLAGS.data_dir)["train"]
    batches_per_epoch = train_examples // (FLAGS.train_batch_size * cluster.num_workers)
    logging.info("ResNet-%d, %d training images (%d steps per epoch), towers: %s, variables on %s, %s",
                 FLAGS.num_layers, train_examples, batches_per_epoch, ", ".join(plan.tower_devices),
                 plan.variable_strategy, FLAGS.data_format)

    config = cli.run_config(plan, cluster, FLAGS.job_dir, save_checkpoints_steps=FLAGS.save_checkpoints_steps)
    estimator = common.Estimator(model_fn.model_fn, config=config, params=model_params(batches_per_epoch))
    eval_metrics = ("accuracy", "loss")
    train_hooks = [hooks.ExamplesPerSecondHook(FLAGS.train_batch_size, every_n_steps=10),
                   hooks.LoggingTensorHook({"learning_rate": "learning_rate", "loss": "loss"}, every_n_iter=100),
                   *cli.profiler_hooks(), *cli.early_stopping_hooks(estimator, None, eval_metrics),
                   cli.hparams_hook()]
    exporters = cli.best_exporters(_serving_input_receiver_fn, None, eval_metrics)
    train_input = input_fn.input_fn(FLAGS.data_dir, "train", FLAGS.train_batch_size,
                                    FLAGS.use_distortion_for_training, synthetic, FLAGS.random_seed)
    eval_input = input_fn.input_fn(FLAGS.data_dir, "eval", FLAGS.eval_batch_size, synthetic=synthetic)
    eval_steps = FLAGS.eval_steps or (10 if synthetic else None)
    try:
        results, _ = cli.train_and_evaluate_by_mode(
            estimator, common.TrainSpec(train_input, max_steps=FLAGS.train_steps, hooks=train_hooks),
            common.EvalSpec(eval_input, steps=eval_steps, throttle_secs=0, start_delay_secs=0, exporters=exporters))
    except tf.errors.DataLossError as error:
        input_fn.raise_for_corrupt_files(FLAGS.data_dir)
        raise input_fn.CifarDataError(f"corrupt TFRecord data under {FLAGS.data_dir}: {error.message}") from error
    if not estimator.is_chief:
        return
    if results:
        print(f"Eval accuracy: {results['accuracy']:.4f} (global step {results['global_step']})", flush=True)
    export_dir = estimator.export_saved_model(os.path.join(FLAGS.job_dir, "export"), _serving_input_receiver_fn)
    print(f"SavedModel: {export_dir}", flush=True)


if __name__ == "__main__":
    process.run(cli.reporting_errors(main, input_fn.CifarDataError))
