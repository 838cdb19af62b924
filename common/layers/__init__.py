"""Keras layers the framework provides to models: `fused_batch_norm` (batch
norm as one fused kernel, TF1's rule included)."""
