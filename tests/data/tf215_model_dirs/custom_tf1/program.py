"""custom_tf1: a TF1-style model_fn (get_variable, compat.v1.layers.dense,
MomentumOptimizer, compat.v1 metrics and summaries). TF 2.15 program."""
import numpy as np
import tensorflow as tf

N_FEATURES = 4
BATCH_SIZE = 8


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.uniform(-1.0, 1.0, size=(n, N_FEATURES)).astype(np.float32)
  y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(np.int64)
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
  x = features['x']
  with tf.compat.v1.variable_scope('hidden'):
    w = tf.compat.v1.get_variable(
        'w', [N_FEATURES, params['hidden']],
        initializer=tf.compat.v1.glorot_uniform_initializer())
    b = tf.compat.v1.get_variable('b', [params['hidden']],
                                  initializer=tf.compat.v1.zeros_initializer())
    h = tf.nn.relu(tf.matmul(x, w) + b)
  logits = tf.compat.v1.layers.dense(h, 2, name='logits')
  probabilities = tf.nn.softmax(logits)
  class_ids = tf.argmax(logits, axis=1)
  predictions = {'class_ids': class_ids, 'probabilities': probabilities,
                 'logits': logits}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(
        mode, predictions=predictions,
        export_outputs={'serving_default':
                        tf.estimator.export.PredictOutput(predictions)})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  accuracy = tf.compat.v1.metrics.accuracy(labels, class_ids)
  tf.compat.v1.summary.scalar('batch_accuracy', accuracy[1])
  tf.compat.v1.summary.histogram('hidden_activations', h)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={'accuracy': accuracy})
  optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, N_FEATURES], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(tf_random_seed=7)
  return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir,
                                config=config, params={'hidden': 4})
