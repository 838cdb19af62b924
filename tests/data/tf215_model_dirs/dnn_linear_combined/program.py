"""dnn_linear_combined: premade tf.estimator.DNNLinearCombinedClassifier with
string labels (label_vocabulary=['no', 'yes']) and weight_column='w'; linear
part on a categorical_column_with_vocabulary_list, dnn part on a numeric
column + an embedding_column; default optimizers (Ftrl / Adagrad).
TF 2.15 program."""
import numpy as np
import tensorflow as tf

CITIES = ['paris', 'rome', 'oslo', 'lima']
BATCH_SIZE = 8

city = tf.feature_column.categorical_column_with_vocabulary_list(
    'city', CITIES)
age = tf.feature_column.numeric_column('age')
city_embedding = tf.feature_column.embedding_column(city, dimension=2)
LINEAR_COLUMNS = [city]
DNN_COLUMNS = [age, city_embedding]


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  c = rs.randint(0, len(CITIES), size=n)
  a = rs.uniform(0.0, 1.0, size=n).astype(np.float32)
  w = rs.choice([0.5, 1.0, 2.0], size=n).astype(np.float32)
  y = np.where((c < 2) ^ (a > 0.7), 'yes', 'no')
  features = {'city': np.array(CITIES)[c], 'age': a, 'w': w}
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
  del features['w']
  return tf.data.Dataset.from_tensor_slices(features).batch(BATCH_SIZE)


serving_input_receiver_fn = (
    tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(
            LINEAR_COLUMNS + DNN_COLUMNS)))


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(tf_random_seed=7)
  return tf.estimator.DNNLinearCombinedClassifier(
      linear_feature_columns=LINEAR_COLUMNS,
      dnn_feature_columns=DNN_COLUMNS,
      dnn_hidden_units=[4, 3],
      label_vocabulary=['no', 'yes'],
      weight_column='w',
      model_dir=model_dir, config=config)
