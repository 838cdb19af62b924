"""v1_dnn_regressor_adam: tf.compat.v1.estimator.DNNRegressor(hidden_units=[4]) given a TF1 optimizer,
tf.compat.v1.train.AdamOptimizer(0.01), as a TF1 program's DNNRegressor was (the loss summed over the batch).
TF 2.15 program."""
import numpy as np
import tensorflow as tf

FEATURE_NAMES = ['a', 'b', 'c']
BATCH_SIZE = 8

FEATURE_COLUMNS = [tf.feature_column.numeric_column(name)
                   for name in FEATURE_NAMES]


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.normal(size=(n, len(FEATURE_NAMES))).astype(np.float32)
  y = (2.0 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + 1.0).astype(np.float32)
  features = {name: x[:, i] for i, name in enumerate(FEATURE_NAMES)}
  return features, y


def train_input_fn():
  features, y = make_data(32, 1)
  ds = tf.data.Dataset.from_tensor_slices((features, y))
  return ds.repeat().batch(BATCH_SIZE)


def eval_input_fn():
  features, y = make_data(16, 2)
  return tf.data.Dataset.from_tensor_slices((features, y)).batch(BATCH_SIZE)


def predict_input_fn():
  features, _ = make_data(5, 3)
  return tf.data.Dataset.from_tensor_slices(features).batch(BATCH_SIZE)


serving_input_receiver_fn = (
    tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(FEATURE_COLUMNS)))


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(tf_random_seed=7)
  return tf.compat.v1.estimator.DNNRegressor(
      hidden_units=[4], feature_columns=FEATURE_COLUMNS,
      optimizer=tf.compat.v1.train.AdamOptimizer(learning_rate=0.01),
      model_dir=model_dir, config=config)
