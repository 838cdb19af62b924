"""CIFAR-10: TFRecord generation, ResNet 6n+2, and `python -m cifar10.main` (the official estimator example on TF2)."""

import common  # noqa: F401,E402  (first: picks TensorFlow's CPU kernels before TensorFlow loads)
