"""dnn_regressor_adam: premade tf.estimator.DNNRegressor(hidden_units=[4])
given an optimizer instance, tf.keras.optimizers.legacy.Adam(0.01).
TF 2.15 program."""
import json
import os
import sys

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
  return tf.estimator.DNNRegressor(
      hidden_units=[4], feature_columns=FEATURE_COLUMNS,
      optimizer=tf.keras.optimizers.legacy.Adam(learning_rate=0.01),
      model_dir=model_dir, config=config)


# ---------------------------------------------------------------------------
# Command-line driver:  python program.py MODEL_DIR ACTION [ARG]
#   train N | evaluate | predict | export DIR
# ---------------------------------------------------------------------------
class LossRecorderHook(tf.compat.v1.train.SessionRunHook):
  """Records the loss of every step, keyed by the global step before it."""

  def __init__(self):
    self.losses = {}

  def begin(self):
    # Estimator adds EstimatorSpec.loss to the LOSSES collection last,
    # right before the hooks are set up.
    self._loss = tf.compat.v1.get_collection(
        tf.compat.v1.GraphKeys.LOSSES)[-1]
    self._global_step = tf.compat.v1.train.get_global_step()

  def after_create_session(self, session, coord):
    self._step = int(session.run(self._global_step))

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._loss)

  def after_run(self, run_context, run_values):
    self.losses[self._step] = float(run_values.results)
    self._step += 1


def _to_py(x):
  if isinstance(x, dict):
    return {str(k): _to_py(v) for k, v in x.items()}
  if isinstance(x, (list, tuple)):
    return [_to_py(v) for v in x]
  if isinstance(x, np.ndarray):
    return _to_py(x.tolist())
  if isinstance(x, bytes):
    return x.decode('utf-8')
  if isinstance(x, (np.integer,)):
    return int(x)
  if isinstance(x, (np.floating, float)):
    return float(x)
  if isinstance(x, np.bool_):
    return bool(x)
  return x


def _tensor_info(info):
  if info.tensor_shape.unknown_rank:
    shape = None
  else:
    shape = [d.size for d in info.tensor_shape.dim]
  return {'dtype': tf.dtypes.as_dtype(info.dtype).name, 'shape': shape,
          'name': info.name}


def describe_saved_model(export_path):
  from tensorflow.core.protobuf import saved_model_pb2
  sm = saved_model_pb2.SavedModel()
  with open(os.path.join(export_path, 'saved_model.pb'), 'rb') as f:
    sm.ParseFromString(f.read())
  result = []
  for mg in sm.meta_graphs:
    sigs = {}
    for key in sorted(mg.signature_def):
      sig = mg.signature_def[key]
      sigs[key] = {
          'method_name': sig.method_name,
          'inputs': {k: _tensor_info(v) for k, v in sorted(sig.inputs.items())},
          'outputs': {k: _tensor_info(v)
                      for k, v in sorted(sig.outputs.items())},
      }
    result.append({'tags': sorted(mg.meta_info_def.tags),
                   'signatures': sigs})
  return result


def main(argv):
  model_dir, action = argv[1], argv[2]
  # RunConfig(tf_random_seed=7) seeds the graph, but Keras-backed layers and
  # initializers (tf.compat.v1.layers.dense, tf.keras.layers.Dense) draw their
  # op seeds from Python's `random` module; seed it too, or the initial
  # weights differ from run to run.
  tf.keras.utils.set_random_seed(7)
  estimator = build_estimator(model_dir)
  if action == 'train':
    hook = LossRecorderHook()
    estimator.train(train_input_fn, hooks=[hook], max_steps=int(argv[3]))
    result = {'losses': {str(k): v for k, v in sorted(hook.losses.items())},
              # (the checkpoint key of the global step differs between
              # estimator kinds, so take it from the checkpoint's name)
              'final_step': int(tf.train.latest_checkpoint(
                  model_dir).rsplit('-', 1)[1])}
  elif action == 'evaluate':
    metrics = estimator.evaluate(eval_input_fn, steps=None)
    result = {k: (int(v) if k == 'global_step' else float(v))
              for k, v in metrics.items()}
  elif action == 'predict':
    result = [_to_py(p) for p in estimator.predict(predict_input_fn)]
  elif action == 'export':
    path = estimator.export_saved_model(argv[3], serving_input_receiver_fn)
    if isinstance(path, bytes):
      path = path.decode('utf-8')
    result = {'meta_graphs': describe_saved_model(path)}
  else:
    raise ValueError('unknown action %r' % action)
  print('RESULT ' + json.dumps(result, sort_keys=True))


if __name__ == '__main__':
  main(sys.argv)
