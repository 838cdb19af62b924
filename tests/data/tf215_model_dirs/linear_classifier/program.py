"""linear_classifier: premade tf.estimator.LinearClassifier with a
categorical_column_with_hash_bucket (string feature), a crossed_column and a
numeric column; default optimizer (Ftrl). TF 2.15 program."""
import numpy as np
import tensorflow as tf

COLORS = np.array(['red', 'green', 'blue', 'black'])
SHAPES = np.array(['circle', 'square', 'star'])
BATCH_SIZE = 8

color = tf.feature_column.categorical_column_with_hash_bucket(
    'color', hash_bucket_size=8)
color_x_shape = tf.feature_column.crossed_column(
    ['color', 'shape'], hash_bucket_size=16)
size = tf.feature_column.numeric_column('size')
FEATURE_COLUMNS = [color, color_x_shape, size]


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  c = rs.randint(0, len(COLORS), size=n)
  s = rs.randint(0, len(SHAPES), size=n)
  z = rs.uniform(0.0, 2.0, size=n).astype(np.float32)
  y = ((c % 2 == 0) ^ (s == 1) ^ (z > 1.5)).astype(np.int64)
  features = {'color': COLORS[c], 'shape': SHAPES[s], 'size': z}
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
  return tf.estimator.LinearClassifier(
      feature_columns=FEATURE_COLUMNS, model_dir=model_dir, config=config)
