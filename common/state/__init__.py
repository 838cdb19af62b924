"""What persists in a model_dir, and how it is kept safe.

`checkpoints` (names, reading, all-or-nothing restore), `checkpoint_store`
(saving with rotation, finding the newest checkpoint that loads),
`warm_start`, `model_dir_lock` (one writer per model_dir), `atomic`
(temp-then-rename files), `summaries` (TensorBoard event files, written and
read without the tensorboard package), `idx_files` (the IDX data files MNIST
comes in). Nothing here knows of model_fn.
"""
