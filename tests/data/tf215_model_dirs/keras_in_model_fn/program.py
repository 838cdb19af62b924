"""keras_in_model_fn: model_fn that builds tf.keras.layers.Dense layers and
trains with tf.compat.v1.train.AdamOptimizer. TF 2.15 program."""
import numpy as np
import tensorflow as tf

N_FEATURES = 5
BATCH_SIZE = 8


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.normal(size=(n, N_FEATURES)).astype(np.float32)
  y = (x @ np.array([1.0, -2.0, 0.5, 0.0, 1.5], np.float32)
       + 0.3).reshape(-1, 1).astype(np.float32)
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


def model_fn(features, labels, mode, params):
  net = features['x']
  for i, units in enumerate(params['hidden_units']):
    net = tf.keras.layers.Dense(units, activation='relu',
                                name='hidden_%d' % i)(net)
  output = tf.keras.layers.Dense(1, name='output')(net)
  predictions = {'value': output}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(
        mode, predictions=predictions,
        export_outputs={'serving_default':
                        tf.estimator.export.PredictOutput(predictions)})
  loss = tf.reduce_mean(tf.square(output - labels))
  metrics = {
      'rmse': tf.compat.v1.metrics.root_mean_squared_error(labels, output),
      'mae': tf.compat.v1.metrics.mean_absolute_error(labels, output),
  }
  tf.compat.v1.summary.scalar('mean_prediction', tf.reduce_mean(output))
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss,
                                      eval_metric_ops=metrics)
  optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, N_FEATURES], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(tf_random_seed=7)
  return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir,
                                config=config,
                                params={'hidden_units': [4, 3]})
