"""Kaggle dogs vs. cats: train on DATA/train, validate on a stratified split,
predict DATA/test and write submission.csv.

    python -m dogcat.main --data_dir=DATA
    python -m dogcat.main --data_dir=DATA --backbone=mobilenet_v2 --backbone_weights=W.h5 --image_size=128
"""

import os
import tempfile

import numpy as np
import tensorflow as tf
from absl import app, flags, logging

import common
from common import hooks
from common.jobs import cli, process
from dogcat import input_fn, model_fn, submission

FLAGS = flags.FLAGS

flags.DEFINE_string("data_dir", None, "Folder holding train/ and test/.")
flags.DEFINE_string("model_dir", os.path.join(tempfile.gettempdir(), "dogcat_model"),
                    "Checkpoints, event files, the export and submission.csv.")
flags.DEFINE_integer("image_size", 150, "Images are resized to image_size x image_size.", lower_bound=32)
flags.DEFINE_integer("train_steps", 5000, "Global steps to train to.", lower_bound=1)
flags.DEFINE_integer("train_batch_size", 32, "Global training batch.", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 64, "Global evaluation and prediction batch.", lower_bound=1)
flags.DEFINE_float("learning_rate", 1e-4, "Adam learning rate.", lower_bound=0)
flags.DEFINE_float("validation_fraction", 0.2, "Share of train/ held out, per class.", lower_bound=0,
                   upper_bound=0.9)
flags.DEFINE_boolean("augment", True, "Random flips and zooms of training images.")
flags.DEFINE_boolean("cache_images", False, "Keep decoded, resized images in memory after the first epoch.")
flags.DEFINE_enum("backbone", "", [""] + sorted(model_fn.BACKBONES), "A keras.applications network, or the small CNN.")
flags.DEFINE_string("backbone_weights", None, "An .h5 / .weights.h5 file of the backbone without its top.")
flags.DEFINE_boolean("fine_tune", False, "Train the backbone too (default: frozen).")
flags.DEFINE_float("clip", 0.005, "Clip submitted probabilities to [clip, 1 - clip].", lower_bound=0,
                   upper_bound=0.5)
flags.DEFINE_integer("eval_every_steps", 500, "Checkpoint and validate every this many steps.", lower_bound=1)
flags.DEFINE_float("max_image_megapixels", input_fn.MAX_MEGAPIXELS,
                   "Leave out (with a warning) images larger than this, read from their headers.", lower_bound=0.01)
flags.DEFINE_string("submission", None, "Where to write submission.csv (default: model_dir/submission.csv).")
cli.define_device_flags()
cli.define_service_flags()
flags.adopt_module_key_flags(cli)  # (--help lists the shared flags with the job's own)


def predict_test(estimator, test):
    """P(dog) for every test id; images that cannot be decoded get 0.5 and a warning."""
    probabilities = np.full(len(test.ids), 0.5)
    usable = [i for i, path in enumerate(test.paths) if path is not None]
    if usable:
        predict = input_fn.input_fn([test.paths[i] for i in usable], [0] * len(usable), FLAGS.image_size,
                                    FLAGS.eval_batch_size, training=False, keys=usable)
        predicted = {int(p["key"]): p["probabilities"]
                     for p in estimator.predict(predict, predict_keys=["key", "probabilities"])}
        failed = [test.paths[i] for i in usable if i not in predicted]
        if failed:
            logging.warning("%d test image(s) did not decode and are predicted 0.5: %s", len(failed), ", ".join(failed))
        for index, probability in predicted.items():
            probabilities[index] = probability
    return probabilities


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    cli.check_existing_dir("data_dir", FLAGS.data_dir)
    cli.check_writable_dir("model_dir", FLAGS.model_dir)
    if FLAGS.backbone_weights and not tf.io.gfile.exists(FLAGS.backbone_weights):
        raise app.UsageError(f"--backbone_weights={FLAGS.backbone_weights} does not exist")
    if FLAGS.backbone:
        try:
            model_fn.check_backbone(FLAGS.backbone, FLAGS.image_size, FLAGS.backbone_weights)
        except ValueError as error:
            raise app.UsageError(str(error)) from error
    plan, cluster = cli.setup_devices()
    cli.check_batch_sizes(plan, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size)
    train = input_fn.list_train(os.path.join(FLAGS.data_dir, "train"), FLAGS.max_image_megapixels)
    train_idx, val_idx = input_fn.stratified_split(train.labels, FLAGS.validation_fraction, FLAGS.random_seed or 0)
    paths, labels = np.array(train.paths), np.array(train.labels)
    logging.info("%d training and %d validation images (%d dogs in all), towers: %s",
                 len(train_idx), len(val_idx), int(labels.sum()), ", ".join(plan.tower_devices))

    params = dict(image_size=FLAGS.image_size, learning_rate=FLAGS.learning_rate, backbone=FLAGS.backbone,
                  backbone_weights=FLAGS.backbone_weights, fine_tune=FLAGS.fine_tune,
                  data_format=FLAGS.data_format, clip_global_norm=FLAGS.clip_global_norm)
    config = cli.run_config(plan, cluster, FLAGS.model_dir, save_checkpoints_steps=FLAGS.eval_every_steps)
    estimator = common.Estimator(model_fn.model_fn, config=config, params=params)
    receiver = common.build_raw_serving_input_receiver_fn(
        {"image": tf.TensorSpec([None, FLAGS.image_size, FLAGS.image_size, 3], tf.float32)})
    eval_metrics = ("accuracy", "log_loss", "loss") if len(val_idx) else None
    train_spec = common.TrainSpec(
        input_fn.input_fn(paths[train_idx], labels[train_idx], FLAGS.image_size, FLAGS.train_batch_size,
                          training=True, augment_images=FLAGS.augment, cache=FLAGS.cache_images,
                          seed=FLAGS.random_seed),
        max_steps=FLAGS.train_steps,
        hooks=[hooks.ExamplesPerSecondHook(FLAGS.train_batch_size, every_n_steps=100), *cli.profiler_hooks(),
               *cli.early_stopping_hooks(estimator, "validation", eval_metrics), cli.hparams_hook()])
    exporters = cli.best_exporters(receiver, "validation", eval_metrics)
    if len(val_idx):
        eval_spec = common.EvalSpec(
            input_fn.input_fn(paths[val_idx], labels[val_idx], FLAGS.image_size, FLAGS.eval_batch_size,
                              training=False, cache=FLAGS.cache_images),
            steps=None, name="validation", throttle_secs=0, start_delay_secs=0, exporters=exporters)
        results, _ = cli.train_and_evaluate_by_mode(estimator, train_spec, eval_spec)
        if results:
            print(f"Validation accuracy: {results['accuracy']:.4f}, log loss: {results['log_loss']:.4f} "
                  f"on {len(val_idx)} images (global step {results['global_step']})", flush=True)
    else:
        cli.train_without_evaluation(estimator, train_spec, f"--validation_fraction={FLAGS.validation_fraction}")
    if not estimator.is_chief:
        return

    test_dir = os.path.join(FLAGS.data_dir, "test")
    if tf.io.gfile.isdir(test_dir):
        test = input_fn.list_test(test_dir, FLAGS.max_image_megapixels)
        path = FLAGS.submission or os.path.join(FLAGS.model_dir, "submission.csv")
        submission.write(path, test.ids, predict_test(estimator, test), FLAGS.clip)
        print(f"Submission: {path} ({len(test.ids)} rows)", flush=True)
    print(f"SavedModel: {estimator.export_saved_model(os.path.join(FLAGS.model_dir, 'export'), receiver)}", flush=True)


if __name__ == "__main__":
    flags.mark_flag_as_required("data_dir")
    process.run(cli.reporting_errors(main, input_fn.DogCatDataError))
