"""Keras layers the framework provides to models: `fused_batch_norm` (batch
norm as one fused kernel, TF1's rule included) and `DenseFeatures` (Keras 2's
feature-column layer, which Keras 3 dropped)."""

from common.layers.dense_features import DenseFeatures

__all__ = ["DenseFeatures"]
