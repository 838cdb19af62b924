"""CIFAR-10: TFRecord generation, ResNet 6n+2, and `python -m cifar10.main` (the official estimator example on TF2)."""

from common.jobs import process

process.prepare_tensorflow()  # (before anything imports TensorFlow)
