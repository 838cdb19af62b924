"""Kaggle dogs vs. cats: JPEG folders, a small CNN or keras.applications backbone, submission.csv."""

import common  # noqa: F401,E402  (first: picks TensorFlow's CPU kernels before TensorFlow loads)
