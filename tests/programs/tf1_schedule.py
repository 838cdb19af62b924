"""A small tf.estimator program whose schedule and return values tests/test_estimator_behaviour.py
compares with TensorFlow 2.15's: evaluation loss over a short last batch, when summaries, loss lines
and checkpoints are written, what train_and_evaluate, predict(predict_keys=str) and export return."""

import numpy as np
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)


def data(count=100):
    x = (np.arange(count, dtype=np.float32) / count).reshape(-1, 1)
    return x, 2 * x + 1


def input_fn(batch_size=32, repeat=False):
    x, y = data()
    dataset = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": x}, y))
    if repeat:
        dataset = dataset.repeat()
    return dataset.batch(batch_size)


def model_fn(features, labels, mode, params):
    predictions = tf.compat.v1.layers.dense(features["x"], 1, name="linear",
                                            kernel_initializer=tf.compat.v1.constant_initializer(0.5))
    outputs = {"y": predictions, "classes": tf.cast(predictions[:, 0] > 1.0, tf.int64)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=outputs)
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=outputs,
                                      eval_metric_ops=metrics)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def evaluate_untrained(model_dir):
    """The initial model evaluated on 100 examples in batches of 32 (the last holds 4)."""
    return tf.estimator.Estimator(model_fn, model_dir).evaluate(lambda: input_fn(32))


def train_on_a_schedule(model_dir, hooks=(), steps=10):
    """Summaries every 3 steps, loss lines every 3, checkpoints every 4, all kept."""
    config = tf.estimator.RunConfig(save_summary_steps=3, log_step_count_steps=3, save_checkpoints_steps=4,
                                    keep_checkpoint_max=None)
    estimator = tf.estimator.Estimator(model_fn, model_dir, config=config)
    estimator.train(lambda: input_fn(8, repeat=True), steps=steps, hooks=list(hooks))
    return estimator


def train_and_evaluate(model_dir):
    estimator = tf.estimator.Estimator(model_fn, model_dir,
                                       config=tf.estimator.RunConfig(save_checkpoints_steps=5))
    exporter = tf.estimator.LatestExporter("latest", serving_input_receiver_fn)
    return tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(lambda: input_fn(8, repeat=True), max_steps=10),
        tf.estimator.EvalSpec(lambda: input_fn(32), steps=None, exporters=[exporter], throttle_secs=0))


def predict_classes(estimator):
    return list(estimator.predict(lambda: input_fn(32), predict_keys="classes"))[:3]
