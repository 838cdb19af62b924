"""tf1_custom_sharded: a TF1 program's own model_fn, run as TF1 ran (v2 behaviour disabled): its dense layers
in a partitioned variable scope (kernels saved as two slices, as a ps job cut them), the slices on two CPU
devices, a sharded Saver in its Scaffold (one checkpoint shard per device) and a TF1 optimizer with slots
(Momentum). TF 2.15 program."""
import numpy as np
import tensorflow as tf

tf.compat.v1.disable_v2_behavior()

N_FEATURES = 6
BATCH_SIZE = 8


def make_data(n, seed):
  rs = np.random.RandomState(seed)
  x = rs.uniform(-1.0, 1.0, size=(n, N_FEATURES)).astype(np.float32)
  y = (x[:, 0] - x[:, 3] + 0.5 * x[:, 5]).astype(np.float32).reshape(-1, 1)
  return x, y


def train_input_fn():
  x, y = make_data(32, 1)
  return tf.compat.v1.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  x, y = make_data(16, 2)
  return tf.compat.v1.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(BATCH_SIZE)


def predict_input_fn():
  x, _ = make_data(5, 3)
  return tf.compat.v1.data.Dataset.from_tensor_slices({'x': x}).batch(BATCH_SIZE)


def _alternate_cpus():
  """Places each new variable on /cpu:0 and /cpu:1 in turn, as replica_device_setter spread them over ps tasks."""
  count = [0]

  def place(op):
    if op.type in ('VariableV2', 'VarHandleOp'):
      count[0] += 1
      return '/cpu:%d' % (count[0] % 2)
    return op.device
  return place


def model_fn(features, labels, mode, params):
  with tf.compat.v1.device(_alternate_cpus()):
    with tf.compat.v1.variable_scope(
        'dnn', partitioner=tf.compat.v1.fixed_size_partitioner(2)):
      h = tf.compat.v1.layers.dense(features['x'], params['hidden'],
                                    activation=tf.nn.relu, name='hiddenlayer_0')
      predictions = tf.compat.v1.layers.dense(h, 1, name='logits')
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(
        mode, predictions={'predictions': predictions},
        export_outputs={'serving_default':
                        tf.estimator.export.PredictOutput({'predictions': predictions})})
  loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
  rmse = tf.compat.v1.metrics.root_mean_squared_error(labels, predictions)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={'rmse': rmse})
  optimizer = tf.compat.v1.train.MomentumOptimizer(0.05, 0.9)
  train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
  scaffold = tf.compat.v1.train.Scaffold(
      saver=tf.compat.v1.train.Saver(sharded=True, max_to_keep=3))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, N_FEATURES], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def build_estimator(model_dir):
  config = tf.estimator.RunConfig(
      tf_random_seed=7,
      session_config=tf.compat.v1.ConfigProto(device_count={'CPU': 2}))
  return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir,
                                config=config, params={'hidden': 4})
