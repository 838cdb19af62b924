"""tf1_dnn_partitioned: a TF1 program's canned estimator, run as TF1 ran (v2 behaviour disabled):
tf.compat.v1.estimator.DNNClassifier over an embedding column with a ps-style input_layer_partitioner (the
embedding saved as two slices) and a TF1 optimizer with slots (Adagrad). TF 2.15 program."""
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_v2_behavior()

BATCH_SIZE = 8
VOCABULARY = 40

FEATURE_COLUMNS = [
    tf.compat.v1.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_identity('item', VOCABULARY), dimension=3),
    tf.feature_column.numeric_column('x', shape=(2,)),
]


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  item = rs.randint(0, VOCABULARY, size=(n, 1)).astype(np.int64)
  x = rs.normal(size=(n, 2)).astype(np.float32)
  y = ((item[:, 0] % 3 == 0) ^ (x[:, 0] > 0)).astype(np.int64)
  return {'item': item, 'x': x}, y


def train_input_fn():
  features, y = make_data(32, 1)
  return tf.compat.v1.data.Dataset.from_tensor_slices((features, y)).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  features, y = make_data(16, 2)
  return tf.compat.v1.data.Dataset.from_tensor_slices((features, y)).batch(BATCH_SIZE)


def predict_input_fn():
  features, _ = make_data(5, 3)
  return tf.compat.v1.data.Dataset.from_tensor_slices(features).batch(BATCH_SIZE)


serving_input_receiver_fn = (
    tf.compat.v1.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.compat.v1.feature_column.make_parse_example_spec(FEATURE_COLUMNS)))


def build_estimator(model_dir):
  config = tf.compat.v1.estimator.RunConfig(tf_random_seed=7, save_summary_steps=2)
  return tf.compat.v1.estimator.DNNClassifier(
      hidden_units=[6, 4], feature_columns=FEATURE_COLUMNS,
      optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.2),
      input_layer_partitioner=tf.compat.v1.fixed_size_partitioner(2),
      model_dir=model_dir, config=config)
