"""Estimator-style training with multi-tower data parallelism on TensorFlow 2.

The public surface is here (common.Estimator, common.EstimatorSpec, ...),
with common.hooks, common.metrics and common.tf1; the packages below say
what they hold (docs/ARCHITECTURE.md has the map):

  spec        the model_fn contract: ModeKeys, EstimatorSpec, metrics, export outputs
  estimator   the Estimator façade, RunConfig, model_to_estimator
  training    train_and_evaluate, the evaluator, early stopping
  engine      how a call runs: model builder, tower step, compiled and outer loops
  variables   who owns the model's variables (modules, served variables)
  devices     device plan, placement, precision, strategies, hosts
  hooks       the hook protocol and the standard hooks
  state       checkpoints, the model-dir lock, atomic files, summaries
  export      receivers, SavedModel writing, exporters
  tf1         TF1 idioms inside model_fn
  layers      Keras layers the framework provides
  upgrade     python -m common.upgrade
  jobs        the dataset mains' kit (flags, schedules), not tf.estimator's API
"""

import os
import sys

# TensorFlow turns its oneDNN CPU kernels on by default only on x86 CPUs with
# AVX-512-class features; on the AVX2 machine this project is measured on
# they train the MNIST CNN 1.6x faster (530 -> 865 ex/s). TensorFlow reads
# this once, when it loads, so it is set before the imports below (the
# dataset packages import common first for that reason);
# TF_ENABLE_ONEDNN_OPTS=0 keeps them off.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

from common import hooks  # noqa: E402
from common.devices.runtime import log_tensorflow_lines_once, set_verbosity  # noqa: E402
from common.estimator.clipping import clip_gradients_by_norm  # noqa: E402
from common.estimator.estimator import Estimator  # noqa: E402
from common.estimator.extenders import add_metrics, forward_features  # noqa: E402
from common.estimator.keras import model_to_estimator  # noqa: E402
from common.estimator.run_config import RunConfig  # noqa: E402
from common.export.exporters import BestExporter, Exporter, FinalExporter, LatestExporter  # noqa: E402
from common.export.receivers import (ServingInputReceiver, TensorServingInputReceiver,  # noqa: E402
                                     build_parsing_serving_input_receiver_fn, build_raw_serving_input_receiver_fn,
                                     placeholder)
from common.spec import metrics  # noqa: E402
from common.spec.export_outputs import ClassificationOutput, PredictOutput, RegressionOutput  # noqa: E402
from common.spec.model_fn import EstimatorSpec, ModeKeys  # noqa: E402
from common.state.checkpoints import CheckpointDamagedError, CheckpointMismatchError  # noqa: E402
from common.state.warm_start import WarmStartSettings  # noqa: E402
from common.training import early_stopping  # noqa: E402
from common.training.train_eval import EvalSpec, TrainSpec, train_and_evaluate  # noqa: E402
from common.variables.registry import VariableCreationError, get_global_step, get_module, get_optimizer  # noqa: E402

log_tensorflow_lines_once()

# `python -m common.upgrade` writes `import common.early_stopping` (tf.estimator.experimental's hooks): the
# module lives in common.training, and this name keeps upgraded programs importing it.
sys.modules[__name__ + ".early_stopping"] = early_stopping

__all__ = [
    "BestExporter",
    "CheckpointDamagedError",
    "CheckpointMismatchError",
    "ClassificationOutput",
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
    "add_metrics",
    "forward_features",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "clip_gradients_by_norm",
    "early_stopping",
    "get_global_step",
    "get_module",
    "get_optimizer",
    "hooks",
    "metrics",
    "model_to_estimator",
    "placeholder",
    "set_verbosity",
    "train_and_evaluate",
]
