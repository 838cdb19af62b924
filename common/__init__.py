"""Estimator-style training with multi-tower data parallelism on TensorFlow 2.

The public surface is here (common.Estimator, common.EstimatorSpec, ...),
with common.hooks and common.metrics; docs/ARCHITECTURE.md has the map of
the packages below.

`import common` imports nothing of TensorFlow and changes nothing: each
public name is imported from its module when it is first used, so
`python -m common.upgrade --help` starts in a moment, and a program's
TensorFlow stays as TensorFlow left it. The import checks the installed
TensorFlow and Keras against the tested range, from their package metadata
(common.internals.versions), and lets the module paths of earlier versions
(`import common.tf1.crf`, written by earlier upgrades) find where those
modules live now (common.upgrade.earlier_paths).
"""

import importlib

from common.internals import versions
from common.upgrade import earlier_paths

versions.check()  # a Keras too old for the private state this project reads is refused here, in one line
earlier_paths.install()

# public name -> the module that defines it
_EXPORTS = {
    "BestExporter": "common.export.exporters",
    "CheckpointDamagedError": "common.state.checkpoints",
    "CheckpointMismatchError": "common.state.checkpoints",
    "ClassificationOutput": "common.spec.export_outputs",
    "Estimator": "common.estimator.estimator",
    "EstimatorSpec": "common.spec.model_fn",
    "EvalSpec": "common.training.train_eval",
    "Exporter": "common.export.exporters",
    "FinalExporter": "common.export.exporters",
    "LatestExporter": "common.export.exporters",
    "ModeKeys": "common.spec.model_fn",
    "PredictOutput": "common.spec.export_outputs",
    "RegressionOutput": "common.spec.export_outputs",
    "RunConfig": "common.estimator.run_config",
    "ServingInputReceiver": "common.export.receivers",
    "TensorServingInputReceiver": "common.export.receivers",
    "TrainSpec": "common.training.train_eval",
    "VariableCreationError": "common.variables.registry",
    "WarmStartSettings": "common.state.warm_start",
    "add_metrics": "common.estimator.extenders",
    "build_parsing_serving_input_receiver_fn": "common.export.receivers",
    "build_raw_serving_input_receiver_fn": "common.export.receivers",
    "clip_gradients_by_norm": "common.estimator.clipping",
    "forward_features": "common.estimator.extenders",
    "get_global_step": "common.variables.registry",
    "get_module": "common.variables.registry",
    "get_optimizer": "common.variables.registry",
    "model_to_estimator": "common.estimator.keras",
    "placeholder": "common.adapters.graph_input",
    "set_verbosity": "common.devices.runtime",
    "train_and_evaluate": "common.training.train_eval",
}
# public name -> the module it is
_MODULES = {
    "early_stopping": "common.training.early_stopping",
    "hooks": "common.hooks",
    "metrics": "common.spec.metrics",
}

__all__ = sorted(_EXPORTS) + sorted(_MODULES)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    else:
        raise AttributeError(f"module 'common' has no attribute {name!r}")
    globals()[name] = value  # (found here the next time, without this function)
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
