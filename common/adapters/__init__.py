"""Adapters: TF1's forms of input, hooks and model_fn outputs turned into the core's one dialect.

The engine reads a DatasetSource, runs Hooks, and takes an EstimatorSpec
whose metrics keep their own state and whose scalars are named. tf.estimator
took more, and real programs use it; the façade (common.estimator) applies
these adapters before the engine sees anything:
  tensor_inputs      input_fns returning tensors, an iterator's get_next(), per-tower lists: a DatasetSource
  graph_input        input_fns that need a TF1 graph (queue runners, placeholders), run in one; placeholder
  session_run_hooks  TF1 SessionRunHooks and CheckpointSaverListeners as Hooks
  model_fns          a model_fn adapted: its summaries, metric pairs and moving averages made the spec's parts
  summaries, metric_pairs, moving_averages
                     what model_fns applies: TF 2's tf.summary in model_fn, (value, update_op) pairs a program
                     made itself, tf.train.ExponentialMovingAverage following the step's update
"""
