"""Services around train(): `train_eval` (TrainSpec, EvalSpec, train_and_evaluate),
`evaluations` (evaluate, then export, when the throttle allows),
`evaluator` (the evaluator task), `early_stopping` (hooks that stop on an
eval metric)."""

from common.training.train_eval import EvalSpec, TrainSpec, train_and_evaluate

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]
