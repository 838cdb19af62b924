"""A TF 2.x-era program in the shape of TensorFlow's "Multi-worker training with
Estimator" tutorial: a CNN built in model_fn, a loss summed with Reduction.NONE
and scaled by the global batch, a strategy in RunConfig."""

import numpy as np
import tensorflow as tf

BATCH_SIZE = 8
LEARNING_RATE = 0.05


def images(count=64, seed=4):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, count).astype(np.int64)
    pictures = rng.rand(count, 6, 6, 1).astype(np.float32) * 0.5
    pictures[labels == 1, 2:4, 2:4, 0] += 1.0
    return pictures, labels


def input_fn(mode, input_context=None):
    pictures, labels = images()
    dataset = tf.data.Dataset.from_tensor_slices((pictures, labels))
    if input_context:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(BATCH_SIZE)


def model_fn(features, labels, mode):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(6, 6, 1),
                               kernel_initializer=tf.keras.initializers.Constant(0.1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.Constant(0.05)),
    ])
    logits = model(features, training=False)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=LEARNING_RATE)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)(labels, logits)
    loss = tf.reduce_sum(loss) * (1. / BATCH_SIZE)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss)
    return tf.estimator.EstimatorSpec(
        mode=mode, loss=loss,
        train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()))


def main(model_dir, devices=None, steps=10):
    strategy = tf.distribute.MirroredStrategy(devices)
    config = tf.estimator.RunConfig(train_distribute=strategy, save_checkpoints_steps=5)
    classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir, config=config)
    tf.estimator.train_and_evaluate(
        classifier,
        train_spec=tf.estimator.TrainSpec(input_fn=input_fn, max_steps=steps),
        eval_spec=tf.estimator.EvalSpec(input_fn=input_fn))
    return classifier
