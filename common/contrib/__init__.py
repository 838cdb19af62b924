"""tf.contrib's pieces and TF1's side libraries, for the programs that used them; imported by no core package.

tf.contrib left TensorFlow in 2.0, and TF1's side libraries (slim, TF1's
recurrent cells, contrib.learn) went with it or were never ported. Real
estimator programs still call them. `python -m common.upgrade` maps their
names here; the paths earlier upgrades wrote (`common.tf1.crf`, ...) still
import these modules (common.upgrade.earlier_paths).
  layers          contrib.layers' functions (layer_norm, fully_connected, optimize_loss, ...), lookup tables,
                  data helpers, GreedyLoadBalancingStrategy
  initializers, arg_scopes, columns, losses, metrics
                  contrib.layers' initializers, its arg_scope keys, its feature columns; contrib.losses;
                  contrib.metrics' streaming metrics
  rnn_cell, fused_rnn
                  TF1's recurrent cells and contrib.rnn's, static and dynamic rnns; the fused LSTM
  crf, hparams, lazy_adam, predictor, slim
                  contrib.crf, contrib.training.HParams, contrib.opt.LazyAdamOptimizer,
                  contrib.predictor, tf.contrib.slim (the tf_slim package, mended for TensorFlow 2.21)
  learn, learn_estimator, learn_canned, learn_datasets
                  contrib.learn: Experiment and learn_runner, its Estimator, its premade estimators, its data sets
  gone            the stand-in for an imported name that has no counterpart: it fails where it is used
"""
