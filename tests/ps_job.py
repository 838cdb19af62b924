"""A tf.estimator-style program for the parameter-server tests (python -m tests.ps_job).

The same command runs on every task of the job: TF_CONFIG (with ps tasks)
says which task this is, and RunConfig() reads it, as tf.estimator's did.
On the chief it trains (variables on the ps tasks, steps on the workers),
then prints where every variable lives and evaluates; on a ps or worker
task train() serves until the chief has ended. Without TF_CONFIG it is one
host reading the job's model_dir (--evaluate_only).
"""

import json

import keras
import numpy as np
import tensorflow as tf
from absl import app, flags

import common
import common.canned
from common.jobs import cli
from common.tf1 import train as tf1_train
from tests import models

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "The job's model dir.")
flags.DEFINE_integer("train_steps", 40, "Global steps.")
flags.DEFINE_integer("batch_size", 16, "Batch per worker step.")
flags.DEFINE_boolean("evaluate_only", False, "Evaluate the model dir's last checkpoint on this host alone.")
flags.DEFINE_boolean("train_and_evaluate", False, "Run common.train_and_evaluate (an evaluator task then evaluates).")
flags.DEFINE_boolean("dataset_made_outside", False, "Give train() an input_fn returning a dataset made outside it.")
flags.DEFINE_boolean("premade", False, "Train a premade wide-and-deep classifier (Ftrl and Adagrad: fused TF1 updates "
                     "that read each variable with its slots) on an embedded categorical column instead.")


def model_fn(features, labels, mode, params):
    net = common.get_module("net", lambda: keras.Sequential([
        keras.layers.Dense(32, activation="tanh", name="hidden"), keras.layers.Dense(3, name="logits")], name="mlp"))
    logits = net(features)
    loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    optimizer = common.get_optimizer(lambda: keras.optimizers.SGD(0.05, momentum=0.9))
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions=logits,
                                eval_metric_ops={"accuracy": accuracy})


def premade(config):
    """A wide-and-deep classifier of y = (x + (1 if c even else -1) > 0), c an identity column of 50 ids, whose
    embedding and linear weights are split in 2 (over the ps tasks, on a parameter-server job); its train and
    eval input_fns."""
    rng = np.random.RandomState(0)
    x = rng.randn(2048).astype(np.float32)
    c = rng.randint(0, 50, 2048).astype(np.int64)
    labels = (x + np.where(c % 2 == 0, 1.0, -1.0) > 0).astype(np.int64)
    column = tf.feature_column.categorical_column_with_identity("c", 50)
    numeric = tf.feature_column.numeric_column("x")
    estimator = common.canned.DNNLinearCombinedClassifier(
        linear_feature_columns=[column, numeric], dnn_feature_columns=[tf.feature_column.embedding_column(column, 4),
                                                                       numeric],
        dnn_hidden_units=[16], config=config, input_layer_partitioner=tf.compat.v1.fixed_size_partitioner(2),
        linear_optimizer=tf1_train.FtrlOptimizer(0.1), dnn_optimizer=tf1_train.AdagradOptimizer(0.1))

    def dataset():  # (made inside each input_fn: a worker builds its own, as TF1 built each in its graph)
        return tf.data.Dataset.from_tensor_slices(({"x": x, "c": c}, labels))
    return estimator, lambda: dataset().shuffle(2048, seed=1).repeat().batch(32), lambda: dataset().batch(256)


def main(argv):
    del argv
    features, labels = models.blobs(4096, dim=8)
    config = common.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=10, steps_per_loop=5, tf_random_seed=3,
                              log_step_count_steps=5)
    estimator = common.Estimator(model_fn, config=config)
    train_input = models.train_input(features, labels, FLAGS.batch_size, shuffle_seed=1)
    eval_input = models.eval_input(features, labels, 256)
    if FLAGS.premade:
        estimator, train_input, eval_input = premade(config)
    if FLAGS.dataset_made_outside:
        made = train_input()
        train_input = lambda: made  # noqa: E731
    if FLAGS.train_and_evaluate:
        result = common.train_and_evaluate(
            estimator, common.TrainSpec(train_input, max_steps=FLAGS.train_steps),
            common.EvalSpec(eval_input, steps=None, start_delay_secs=0, throttle_secs=0))
        print("RESULT " + json.dumps({k: float(v) for k, v in ((result or [None])[0] or {}).items()}), flush=True)
    elif not FLAGS.evaluate_only:
        estimator.train(train_input, max_steps=FLAGS.train_steps)
    if estimator.is_chief and not FLAGS.train_and_evaluate:
        print("DEVICES " + json.dumps(estimator.variable_devices()), flush=True)
        metrics = estimator.evaluate(eval_input)
        print("EVAL " + json.dumps({k: float(v) for k, v in metrics.items()}), flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    flags.mark_flag_as_required("model_dir")
    app.run(cli.reporting_errors(main))
