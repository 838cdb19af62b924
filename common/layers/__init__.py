"""Keras layers the framework provides to models: `fused_batch_norm` (batch
norm as one fused kernel, TF1's rule included), `DenseFeatures` and
`SequenceFeatures` (Keras 2's feature-column layers, which Keras 3 dropped)."""

from common.layers.dense_features import DenseFeatures
from common.layers.sequence_features import SequenceFeatures

__all__ = ["DenseFeatures", "SequenceFeatures"]
