"""Runs a kind's TF 2.15 program (KIND/program.py) with TensorFlow 2.15 and prints its result as JSON:

    python driver.py KIND MODEL_DIR train N | evaluate | predict | export DIR

record.py runs it; each program.py holds only what a TF 2.15 user's program holds (the model, the input_fns,
the serving receiver, build_estimator), which the project's tests upgrade and run.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import tensorflow as tf


def load(kind):
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), kind, "program.py")
  spec = importlib.util.spec_from_file_location(kind, path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


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
  program, model_dir, action = load(argv[1]), argv[2], argv[3]
  # RunConfig(tf_random_seed=7) seeds the graph, but Keras-backed layers and
  # initializers (tf.compat.v1.layers.dense, tf.keras.layers.Dense) draw their
  # op seeds from Python's `random` module; seed it too, or the initial
  # weights differ from run to run.
  tf.keras.utils.set_random_seed(7)
  estimator = program.build_estimator(model_dir)
  if action == 'train':
    hook = LossRecorderHook()
    estimator.train(program.train_input_fn, hooks=[hook], max_steps=int(argv[4]))
    result = {'losses': {str(k): v for k, v in sorted(hook.losses.items())},
              # (the checkpoint key of the global step differs between
              # estimator kinds, so take it from the checkpoint's name)
              'final_step': int(tf.train.latest_checkpoint(
                  model_dir).rsplit('-', 1)[1])}
  elif action == 'evaluate':
    metrics = estimator.evaluate(program.eval_input_fn, steps=None)
    result = {k: (int(v) if k == 'global_step' else float(v))
              for k, v in metrics.items()}
  elif action == 'predict':
    result = [_to_py(p) for p in estimator.predict(program.predict_input_fn)]
  elif action == 'export':
    path = estimator.export_saved_model(argv[4], program.serving_input_receiver_fn)
    if isinstance(path, bytes):
      path = path.decode('utf-8')
    result = {'meta_graphs': describe_saved_model(path)}
  else:
    raise ValueError('unknown action %r' % action)
  print('RESULT ' + json.dumps(result, sort_keys=True))


if __name__ == '__main__':
  main(sys.argv)
