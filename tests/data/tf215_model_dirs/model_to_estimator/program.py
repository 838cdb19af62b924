"""model_to_estimator: tf.keras.estimator.model_to_estimator of a compiled
tf.keras Sequential (Dense 4 relu, Dense 1; mse, adam, metrics=['mae']).
TF 2.15 program."""
import numpy as np
import tensorflow as tf

N_FEATURES = 3
BATCH_SIZE = 8


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.normal(size=(n, N_FEATURES)).astype(np.float32)
  y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.5).astype(
      np.float32)
  return x, y


def train_input_fn():
  x, y = make_data(32, 1)
  ds = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
  return ds.repeat().batch(BATCH_SIZE)


def eval_input_fn():
  x, y = make_data(16, 2)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(BATCH_SIZE)


def predict_input_fn():
  x, _ = make_data(5, 3)
  return tf.data.Dataset.from_tensor_slices({'x': x}).batch(BATCH_SIZE)


def build_keras_model():
  model = tf.keras.Sequential([
      tf.keras.Input(shape=(N_FEATURES,), name='x'),
      tf.keras.layers.Dense(4, activation='relu', name='hidden'),
      tf.keras.layers.Dense(1, name='output'),
  ])
  model.compile(loss='mse', optimizer='adam', metrics=['mae'])
  return model


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, N_FEATURES], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(tf_random_seed=7)
  return tf.keras.estimator.model_to_estimator(
      keras_model=build_keras_model(), model_dir=model_dir, config=config)
