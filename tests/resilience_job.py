"""A small training job for the resilience tests (python -m tests.resilience_job).

Seeded weights, dropout and data order, the input pipeline's position
checkpointed, a checkpoint at every step, so an interrupted and resumed
run can be compared with an uninterrupted one bit for bit.
"""

import os
import signal

import keras
import tensorflow as tf
from absl import app, flags

import common
from common import hooks
from common.jobs import cli
from tests import models

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Where checkpoints go.")
flags.DEFINE_integer("train_steps", 40, "Global steps to train to.", lower_bound=1)
flags.DEFINE_float("learning_rate", 0.05, "SGD learning rate.")
flags.DEFINE_integer("hidden", 256, "Hidden units (checkpoint size).", lower_bound=1)
flags.DEFINE_integer("nan_at_step", -1, "Make the loss NaN at this global step (to test divergence).")
flags.DEFINE_enum("stop_during", None, ["evaluate", "export"], "After training, evaluate or export, and send this "
                  "process --stop_signal in the middle of it.")
flags.DEFINE_enum("stop_signal", "SIGTERM", ["SIGTERM", "SIGINT"], "The signal --stop_during sends.")


def signal_self(*unused):
    os.kill(os.getpid(), signal.Signals[FLAGS.stop_signal])


class SignalSelfHook(hooks.Hook):
    def after_step(self, step, values, context):
        signal_self()


def model_fn(features, labels, mode, params):
    net = common.get_module("net", lambda: keras.Sequential([
        keras.layers.Dense(params["hidden"], activation="relu", name="hidden"),
        keras.layers.Dropout(0.3, name="dropout"),
        keras.layers.Dense(params["hidden"], activation="relu", name="hidden2"),
        keras.layers.Dense(3, name="logits")], name="mlp"))
    logits = net(features, training=mode == common.ModeKeys.TRAIN)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    loss *= tf.where(tf.equal(common.get_global_step(), params["nan_at_step"]), float("nan"), 1.0)
    optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(params["learning_rate"], momentum=0.9))
    return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions=logits)


def main(argv):
    del argv
    features, labels = models.blobs(512, dim=16)
    config = common.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=1, keep_checkpoint_max=3,
                              tf_random_seed=11, checkpoint_input_pipeline=True, log_step_count_steps=1,
                              save_summary_steps=0)
    estimator = common.Estimator(model_fn, config=config,
                                 params={"hidden": FLAGS.hidden, "learning_rate": FLAGS.learning_rate,
                                         "nan_at_step": FLAGS.nan_at_step})
    estimator.train(models.train_input(features, labels, 16, shuffle_seed=5), max_steps=FLAGS.train_steps)
    print(f"Finished at global step {estimator.get_variable_value('global_step')}", flush=True)
    if FLAGS.stop_during == "evaluate":
        estimator.evaluate(models.eval_input(features, labels, 64), hooks=[SignalSelfHook()])
    elif FLAGS.stop_during == "export":
        estimator.export_saved_model(os.path.join(FLAGS.model_dir, "export"), lambda: common.ServingInputReceiver(
            lambda received: (signal_self(), received["x"])[1], {"x": tf.TensorSpec([None, 16], tf.float32)}))


if __name__ == "__main__":
    flags.mark_flag_as_required("model_dir")
    app.run(cli.reporting_errors(main))
