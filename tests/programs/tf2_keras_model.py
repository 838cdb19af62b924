"""A TF 2.x-era program: a compiled functional Keras model turned into an estimator."""

import numpy as np
import tensorflow as tf

_RNG = np.random.RandomState(2)
HIDDEN_KERNEL = (_RNG.randn(4, 6) * 0.5).astype(np.float32)
OUTPUT_KERNEL = (_RNG.randn(6, 3) * 0.5).astype(np.float32)


def blobs(count=96, seed=3):
    rng = np.random.RandomState(seed)
    centers = rng.randn(3, 4).astype(np.float32) * 2
    labels = rng.randint(0, 3, count).astype(np.int64)
    return centers[labels] + rng.randn(count, 4).astype(np.float32), labels


def build_model():
    inputs = tf.keras.Input(shape=(4,), name="x")
    hidden = tf.keras.layers.Dense(6, activation="tanh", kernel_initializer=tf.constant_initializer(HIDDEN_KERNEL),
                                   kernel_regularizer=tf.keras.regularizers.l2(0.01))(inputs)
    outputs = tf.keras.layers.Dense(3, activation="softmax", name="probabilities",
                                    kernel_initializer=tf.constant_initializer(OUTPUT_KERNEL))(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.legacy.SGD(lr=0.2, momentum=0.5),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def input_fn(training, batch_size=12):
    features, labels = blobs()
    dataset = tf.data.Dataset.from_tensor_slices(({"x": features}, labels))
    return dataset.repeat().batch(batch_size) if training else dataset.batch(batch_size)


def make_estimator(model_dir, config=None):
    return tf.keras.estimator.model_to_estimator(keras_model=build_model(), model_dir=model_dir, config=config)


def main(model_dir, steps=8):
    estimator = make_estimator(model_dir)
    estimator.train(lambda: input_fn(True), steps=steps)
    return estimator, estimator.evaluate(lambda: input_fn(False))
