"""The dataset jobs' kit (cifar10, mnist, dogcat mains), not tf.estimator's API:
`cli` (the shared absl flags and the checks run before anything is
written), `schedules` (learning rates by --lr_schedule), `optimizers` (by
--optimizer), `element_seeds` (a seed per example for stateless augmentation)."""
