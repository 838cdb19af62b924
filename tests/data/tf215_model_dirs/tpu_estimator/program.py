"""tpu_estimator: tf.compat.v1.estimator.tpu.TPUEstimator(use_tpu=False) with
a TPUEstimatorSpec model_fn and input_fns reading params['batch_size'].
TF 2.15 program."""
import numpy as np
import tensorflow as tf

N_FEATURES = 4
USE_TPU = False


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.uniform(-1.0, 1.0, size=(n, N_FEATURES)).astype(np.float32)
  y = (x[:, 0] * x[:, 1] + x[:, 2] > 0).astype(np.int32)
  return x, y


def train_input_fn(params):
  x, y = make_data(32, 1)
  ds = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
  return ds.repeat().batch(params['batch_size'], drop_remainder=True)


def eval_input_fn(params):
  x, y = make_data(16, 2)
  ds = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
  return ds.batch(params['batch_size'], drop_remainder=True)


def predict_input_fn(params):
  x, _ = make_data(5, 3)
  return tf.data.Dataset.from_tensor_slices({'x': x}).batch(
      params['batch_size'])


def metric_fn(labels, logits):
  predictions = tf.argmax(logits, axis=1)
  return {'accuracy': tf.compat.v1.metrics.accuracy(labels, predictions)}


def model_fn(features, labels, mode, params):
  x = features['x']
  hidden = tf.compat.v1.layers.dense(x, 4, activation=tf.nn.relu,
                                     name='hidden')
  logits = tf.compat.v1.layers.dense(hidden, 2, name='logits')
  if mode == tf.estimator.ModeKeys.PREDICT:
    predictions = {'class_ids': tf.argmax(logits, axis=1),
                   'probabilities': tf.nn.softmax(logits)}
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, predictions=predictions,
        export_outputs={'serving_default':
                        tf.estimator.export.PredictOutput(predictions)})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  if params['use_tpu']:
    optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss,
                                                     train_op=train_op)


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, N_FEATURES], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def build_estimator(model_dir):
  config = tf.compat.v1.estimator.tpu.RunConfig(
      model_dir=model_dir, tf_random_seed=7,
      tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=2))
  return tf.compat.v1.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=USE_TPU,
      train_batch_size=8, eval_batch_size=8, predict_batch_size=8,
      params={'use_tpu': USE_TPU})
