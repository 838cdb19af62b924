"""MNIST: IDX/npz input, the tutorial CNN, and `python -m mnist.main`."""
