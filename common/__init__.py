"""Estimator-style training with multi-tower data parallelism on TensorFlow 2."""

from common.checkpoints import CheckpointMismatchError, WarmStartSettings
from common.estimator import Estimator
from common.export import ServingInputReceiver, build_raw_serving_input_receiver_fn
from common.registry import VariableCreationError, get_global_step, get_module, get_optimizer
from common.run_config import RunConfig
from common.spec import EstimatorSpec, ModeKeys
from common.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = [
    "CheckpointMismatchError",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "ModeKeys",
    "RunConfig",
    "ServingInputReceiver",
    "TrainSpec",
    "VariableCreationError",
    "WarmStartSettings",
    "build_raw_serving_input_receiver_fn",
    "get_global_step",
    "get_module",
    "get_optimizer",
    "train_and_evaluate",
]
