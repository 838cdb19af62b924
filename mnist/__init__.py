"""MNIST: IDX/npz input, the tutorial CNN, and `python -m mnist.main`."""

import common  # noqa: F401,E402  (first: picks TensorFlow's CPU kernels before TensorFlow loads)
