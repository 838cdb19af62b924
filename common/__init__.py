"""Estimator-style training with multi-tower data parallelism on TensorFlow 2."""

import os

# TensorFlow turns its oneDNN CPU kernels on by default only on x86 CPUs with
# AVX-512-class features; on the AVX2 machine this project is measured on
# they train the MNIST CNN 1.6x faster (530 -> 865 ex/s). TensorFlow reads
# this once, when it loads, so it is set before the imports below (the
# dataset packages import common first for that reason);
# TF_ENABLE_ONEDNN_OPTS=0 keeps them off.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

from common.checkpoints import CheckpointDamagedError, CheckpointMismatchError, WarmStartSettings
from common.estimator import Estimator
from common.export_outputs import ClassificationOutput, PredictOutput, RegressionOutput
from common.exporters import BestExporter, Exporter, FinalExporter, LatestExporter
from common.keras_estimator import model_to_estimator
from common.optimizers import clip_gradients_by_norm
from common.receivers import (ServingInputReceiver, TensorServingInputReceiver,
                              build_parsing_serving_input_receiver_fn, build_raw_serving_input_receiver_fn,
                              placeholder)
from common.registry import VariableCreationError, get_global_step, get_module, get_optimizer
from common.run_config import RunConfig
from common.runtime import set_verbosity
from common.spec import EstimatorSpec, ModeKeys
from common.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = [
    "BestExporter",
    "CheckpointDamagedError",
    "ClassificationOutput",
    "CheckpointMismatchError",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "ModeKeys",
    "PredictOutput",
    "RegressionOutput",
    "RunConfig",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "TrainSpec",
    "VariableCreationError",
    "WarmStartSettings",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "clip_gradients_by_norm",
    "get_global_step",
    "get_module",
    "get_optimizer",
    "model_to_estimator",
    "placeholder",
    "set_verbosity",
    "train_and_evaluate",
]
