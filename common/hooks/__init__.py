"""Hooks: what runs between calls of the compiled loop, and when.

`protocol` is the contract (Hook, RunContext) and `triggers` says when a
periodic hook fires; the standard hooks are tf.estimator's, by what they do:
`reporting` (LoggingTensor, ExamplesPerSecond, StepCounter, Progress),
`stopping` (StopAtStep, NanTensor), `saving` (CheckpointSaver, SummarySaver,
HParams), `profiler`; `signals` turns SIGTERM into a saved, resumable stop.
`python -m common.upgrade` rewrites tf.estimator's hook names to these
(common.hooks.<name>).
"""

from common.hooks.profiler import ProfilerHook
from common.hooks.protocol import Hook, PeriodicHook, RateHook, RunContext, value_name
from common.hooks.reporting import ExamplesPerSecondHook, LoggingTensorHook, ProgressHook, StepCounterHook
from common.hooks.saving import CheckpointSaverHook, HParamsHook, SummarySaverHook
from common.hooks.stopping import NanLossDuringTrainingError, NanTensorHook, StopAtStepHook

__all__ = [
    "CheckpointSaverHook", "ExamplesPerSecondHook", "HParamsHook", "Hook", "LoggingTensorHook",
    "NanLossDuringTrainingError", "NanTensorHook", "PeriodicHook", "ProfilerHook", "ProgressHook", "RateHook",
    "RunContext", "StepCounterHook", "StopAtStepHook", "SummarySaverHook", "value_name",
]
