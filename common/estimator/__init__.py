"""The Estimator façade and what it is configured with.

`estimator` (Estimator: train / evaluate / predict / export, each assembling
the engine's parts), `training_run` (what one train() call assembles),
`run_config` (RunConfig), `keras` (model_to_estimator), `clipping`
(clip_gradients_by_norm).
"""

from common.estimator.estimator import Estimator
from common.estimator.run_config import RunConfig

__all__ = ["Estimator", "RunConfig"]
