"""dnn_classifier: premade tf.estimator.DNNClassifier, hidden_units=[4, 3],
numeric feature columns, n_classes=3, default optimizer (Adagrad).
TF 2.15 program."""
import numpy as np
import tensorflow as tf

FEATURE_NAMES = ['f0', 'f1', 'f2', 'f3']
BATCH_SIZE = 8

FEATURE_COLUMNS = [tf.feature_column.numeric_column(name)
                   for name in FEATURE_NAMES]


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.uniform(-1.0, 1.0, size=(n, len(FEATURE_NAMES))).astype(np.float32)
  score = x[:, 0] - x[:, 1] + 0.5 * x[:, 2]
  y = np.digitize(score, [-0.5, 0.5]).astype(np.int64)
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
  return tf.estimator.DNNClassifier(
      hidden_units=[4, 3], feature_columns=FEATURE_COLUMNS, n_classes=3,
      model_dir=model_dir, config=config)
