"""custom_optimizer: a get_variable model_fn trained with a user-written
subclass of tf.compat.v1.train.Optimizer (SGD with an accumulator slot).
TF 2.15 program."""
import numpy as np
import tensorflow as tf

N_FEATURES = 3
BATCH_SIZE = 8


class AccumulatingSGD(tf.compat.v1.train.Optimizer):
  """accum = decay * accum + grad;  var -= learning_rate * accum."""

  def __init__(self, learning_rate=0.05, decay=0.5, use_locking=False,
               name='AccumulatingSGD'):
    super(AccumulatingSGD, self).__init__(use_locking, name)
    self._learning_rate = learning_rate
    self._decay = decay

  def _create_slots(self, var_list):
    for v in var_list:
      self._zeros_slot(v, 'accum', self._name)

  def _prepare(self):
    self._lr_t = tf.convert_to_tensor(self._learning_rate, name='lr')
    self._decay_t = tf.convert_to_tensor(self._decay, name='decay')

  def _apply_dense(self, grad, var):
    accum = self.get_slot(var, 'accum')
    lr = tf.cast(self._lr_t, var.dtype.base_dtype)
    decay = tf.cast(self._decay_t, var.dtype.base_dtype)
    accum_t = tf.compat.v1.assign(accum, decay * accum + grad,
                                  use_locking=self._use_locking)
    var_update = tf.compat.v1.assign_sub(var, lr * accum_t,
                                         use_locking=self._use_locking)
    return tf.group(var_update, accum_t)

  def _resource_apply_dense(self, grad, var):
    accum = self.get_slot(var, 'accum')
    lr = tf.cast(self._lr_t, var.dtype.base_dtype)
    decay = tf.cast(self._decay_t, var.dtype.base_dtype)
    accum_t = accum.assign(decay * accum + grad,
                           use_locking=self._use_locking)
    return var.assign_sub(lr * accum_t, use_locking=self._use_locking).op

  def _apply_sparse(self, grad, var):
    raise NotImplementedError('sparse gradients are not supported')

  def _resource_apply_sparse(self, grad, var, indices):
    raise NotImplementedError('sparse gradients are not supported')


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.normal(size=(n, N_FEATURES)).astype(np.float32)
  y = (x @ np.array([[1.5], [-1.0], [0.5]], np.float32) + 0.2).astype(
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


def model_fn(features, labels, mode, params):
  x = features['x']
  w = tf.compat.v1.get_variable(
      'weights', [N_FEATURES, 1],
      initializer=tf.compat.v1.random_normal_initializer(stddev=0.1))
  b = tf.compat.v1.get_variable('bias', [1],
                                initializer=tf.compat.v1.zeros_initializer())
  prediction = tf.matmul(x, w) + b
  if mode == tf.estimator.ModeKeys.PREDICT:
    predictions = {'prediction': prediction}
    return tf.estimator.EstimatorSpec(
        mode, predictions=predictions,
        export_outputs={'serving_default':
                        tf.estimator.export.PredictOutput(predictions)})
  loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(
        mode, loss=loss,
        eval_metric_ops={
            'mse': tf.compat.v1.metrics.mean_squared_error(labels,
                                                           prediction)})
  optimizer = AccumulatingSGD(learning_rate=params['learning_rate'])
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
                                params={'learning_rate': 0.05})
