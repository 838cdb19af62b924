"""tf.compat.v1's API inside model_fn, mapped onto the project's machinery.

`python -m common.upgrade` rewrites a TF1-era (or TF 2.x-era) estimator
program's `tf.compat.v1.*` names to these modules: `train` (TF1's optimizers,
whose `minimize` gives a train_op, the global step, Scaffold,
init_from_checkpoint), `layers` (the functional TF1 layers on get_variable),
`metrics` ((value, update_op) pairs), `summary` (summaries written in
model_fn), `variables` and `losses` (the trainable-variables and
regularization-losses collections), `feature_column` (TF1's column classes,
shared embeddings), `saver` (a Saver made in model_fn), `keras_backend`
(`set_learning_phase`), `file_writer` (`tf.summary.FileWriter` outside
model_fn), `update_rules` (Keras optimizers with TF1's update rules),
`device_setter` (replica_device_setter without ps tasks).
They build on the TF1 runtime (common.tf1_runtime) and the adapters
(common.adapters); tf.contrib's pieces are common.contrib's.
"""
