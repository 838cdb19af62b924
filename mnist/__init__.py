"""MNIST: IDX/npz input, the tutorial CNN, and `python -m mnist.main`."""

from common.jobs import process

process.prepare_tensorflow()  # (before anything imports TensorFlow)
