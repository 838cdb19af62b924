"""A TF1-era estimator program in the style of the tf.layers MNIST tutorial: a CNN of
tf.compat.v1.layers with batch norm and dropout, TF1 metrics and summaries, a momentum
optimizer through a learning-rate drop, a SessionRunHook, as tf_upgrade_v2 left it."""

import numpy as np
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

BATCH_SIZE = 8
_RNG = np.random.RandomState(5)
CONV_KERNEL = (_RNG.randn(3, 3, 1, 4) * 0.3).astype(np.float32)
DENSE_KERNEL = (_RNG.randn(16, 2) * 0.3).astype(np.float32)


def images(count=64, seed=6):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, count).astype(np.int64)
    pictures = rng.rand(count, 6, 6, 1).astype(np.float32) * 0.5
    pictures[labels == 1, 1:4, 1:4, 0] += 1.0
    return pictures, labels


def input_fn(mode):
    pictures, labels = images()
    dataset = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": pictures}, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(BATCH_SIZE)


def cnn_model_fn(features, labels, mode, params):
    training = mode == tf.estimator.ModeKeys.TRAIN
    conv = tf.compat.v1.layers.conv2d(features["x"], 4, 3, activation=tf.nn.relu,
                                      kernel_initializer=tf.compat.v1.constant_initializer(CONV_KERNEL))
    normed = tf.compat.v1.layers.batch_normalization(conv, momentum=0.9, training=training)
    pooled = tf.compat.v1.layers.max_pooling2d(normed, pool_size=2, strides=2)
    flat = tf.compat.v1.layers.flatten(pooled)
    dropped = tf.compat.v1.layers.dropout(flat, rate=params["dropout"], training=training)
    logits = tf.compat.v1.layers.dense(dropped, 2, kernel_initializer=tf.compat.v1.constant_initializer(DENSE_KERNEL),
                                       name="logits")
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits, name="softmax")}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.identity(tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits), name="loss")
    if mode == tf.estimator.ModeKeys.EVAL:
        eval_metric_ops = {
            "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predictions["classes"]),
            "auc": tf.compat.v1.metrics.auc(labels=labels, predictions=predictions["probabilities"][:, 1]),
        }
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)
    global_step = tf.compat.v1.train.get_global_step()
    learning_rate = tf.compat.v1.train.piecewise_constant(global_step, [np.int64(3)], [0.1, 0.02])
    tf.compat.v1.summary.scalar("learning_rate", learning_rate)
    optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.9)
    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss=loss, global_step=global_step)
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    pictures = tf.compat.v1.placeholder(tf.float32, [None, 6, 6, 1], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": pictures}, {"x": pictures})


class StepRecorder(tf.estimator.SessionRunHook):
    """Records the global step and loss of every run, and stops after `stop_at` runs."""

    def __init__(self, stop_at):
        self.stop_at, self.seen = stop_at, []

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()

    def before_run(self, run_context):
        return tf.estimator.SessionRunArgs({"step": self._global_step, "loss": "loss:0"})

    def after_run(self, run_context, run_values):
        self.seen.append((int(run_values.results["step"]), float(run_values.results["loss"])))
        if len(self.seen) >= self.stop_at:
            run_context.request_stop()


def main(model_dir, steps=6, config=None):
    classifier = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir=model_dir, params={"dropout": 0.0},
                                        config=config or tf.estimator.RunConfig(save_checkpoints_steps=3))
    recorder = StepRecorder(stop_at=steps)
    classifier.train(input_fn=lambda: input_fn(tf.estimator.ModeKeys.TRAIN), steps=100, hooks=[recorder])
    results = classifier.evaluate(input_fn=lambda: input_fn(tf.estimator.ModeKeys.EVAL))
    return classifier, recorder.seen, results
