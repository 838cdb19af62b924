"""TF1 idioms inside model_fn, mapped onto the project's machinery.

`python -m common.upgrade` rewrites a TF1-era (or TF 2.x-era) estimator
program's `tf.compat.v1.*` names to these modules: `train` (optimizers whose
`minimize` gives a train_op, the global step), `layers` (the functional TF1
layers), `metrics` ((value, update_op) pairs), `summary` (scalars written in
model_fn), `variables` and `losses` (the trainable-variables and
regularization-losses collections), `contrib` (the tf.contrib layer norm,
initializers and lookup tables)."""
