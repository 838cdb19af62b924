"""A TF 2.x-era estimator program: a Keras Sequential with batch norm and dropout
built inside model_fn, a TF1 momentum optimizer through a learning-rate drop, a
Keras metric, a placeholder serving receiver."""

import os

import numpy as np
import tensorflow as tf

tf.compat.v1.disable_eager_execution()

BATCH_SIZE = 16
_RNG = np.random.RandomState(0)
HIDDEN_KERNEL = (_RNG.randn(4, 8) * 0.5).astype(np.float32)
LOGITS_KERNEL = (_RNG.randn(8, 3) * 0.5).astype(np.float32)


def blobs(count=128, seed=1):
    rng = np.random.RandomState(seed)
    centers = rng.randn(3, 4).astype(np.float32) * 2
    labels = rng.randint(0, 3, count).astype(np.int64)
    return centers[labels] + rng.randn(count, 4).astype(np.float32), labels


def input_fn(mode, batch_size=BATCH_SIZE):
    features, labels = blobs()
    dataset = tf.data.Dataset.from_tensor_slices(({"x": features}, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
        return dataset.repeat().batch(batch_size)
    return dataset.batch(batch_size)


def model_fn(features, labels, mode, params):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(4,),
                              kernel_initializer=tf.constant_initializer(HIDDEN_KERNEL)),
        tf.keras.layers.BatchNormalization(momentum=0.9),
        tf.keras.layers.Dropout(params["dropout"]),
        tf.keras.layers.Dense(3, kernel_initializer=tf.constant_initializer(LOGITS_KERNEL)),
    ])
    logits = model(features["x"], training=mode == tf.estimator.ModeKeys.TRAIN)
    predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions=predictions,
            export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)})
    per_example = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)(labels, logits)
    loss = tf.reduce_mean(per_example)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.keras.metrics.Accuracy()
        accuracy.update_state(labels, predictions["classes"])
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    global_step = tf.compat.v1.train.get_or_create_global_step()
    learning_rate = tf.compat.v1.train.piecewise_constant(global_step, [np.int64(2)], [0.1, 0.01])
    optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.9)
    train_op = optimizer.minimize(loss, global_step=global_step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def make_estimator(model_dir, dropout=0.0, config=None):
    config = config or tf.estimator.RunConfig(tf_random_seed=1, save_checkpoints_steps=3)
    return tf.estimator.Estimator(model_fn, model_dir, config=config, params={"dropout": dropout})


def main(model_dir, steps=6):
    estimator = make_estimator(model_dir)
    tf.estimator.train_and_evaluate(
        estimator,
        tf.estimator.TrainSpec(lambda: input_fn(tf.estimator.ModeKeys.TRAIN), max_steps=steps),
        tf.estimator.EvalSpec(lambda: input_fn(tf.estimator.ModeKeys.EVAL), steps=None,
                              start_delay_secs=0, throttle_secs=0))
    estimator.export_saved_model(os.path.join(model_dir, "export"), serving_input_receiver_fn)
    return estimator
