"""The TF1 runtime the core needs below it: what a TF1 graph gave model_fn, per call.

tf.estimator called model_fn in a fresh TF1 graph; model_fns written for it
(and tf.compat.v1 code inside TF 2.x ones) rely on what such a graph gives.
This package gives each call of model_fn that graph's state and nothing
more, under a small interface the variable registry (common.variables)
calls:
  tf1_graph    the graph state and the tf.compat.v1 variable store of one model_fn call
               (fresh_graph, creating, collect, model_graph)
  partitioned  partitioned variables: whole on one host, as a TF1 checkpoint holds them
  optimizer    tf.compat.v1.train.Optimizer, the base of TF1's optimizers and of users'
               own, whose apply is deferred until the towers' gradients are averaged
The TF1 API that programs call (common.tf1) and the adapters that turn TF1's
forms into the core's (common.adapters) sit above the core and use this.
"""
