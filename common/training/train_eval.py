"""`train_and_evaluate` with TrainSpec and (one or more) EvalSpecs.

As in tf.estimator's local mode: training runs to max_steps; after a
checkpoint is saved, every EvalSpec is evaluated if at least its
throttle_secs have passed since its last evaluation; a final evaluation
follows the last step. After each evaluation the spec's exporters run
(common.exporters), told whether it is the final one. The exporters' folders
are checked before step 1 (common.export.preflight); an export that fails
later on the file system is logged and recorded, and training goes on.
"""

import dataclasses
from typing import Callable, Optional, Sequence

from tensorflow.compat.v1 import logging

from common.export import preflight
from common.hooks.protocol import Hook
from common.training import evaluations, evaluator


@dataclasses.dataclass
class TrainSpec:
    """What train_and_evaluate trains, as tf.estimator's TrainSpec.

    Args:
      input_fn: the training input_fn, as Estimator.train takes it.
      max_steps: train up to this global step; None: until the input ends.
      hooks: common.hooks.Hook objects (or TF1 SessionRunHooks) run while training.
    Raises:
      ValueError: max_steps is not positive.
    """

    input_fn: Callable
    max_steps: Optional[int] = None
    hooks: Sequence[Hook] = ()

    def __post_init__(self):
        if self.max_steps is not None and self.max_steps <= 0:
            raise ValueError(f"TrainSpec: max_steps must be > 0, got {self.max_steps}")


@dataclasses.dataclass
class EvalSpec:
    """What train_and_evaluate evaluates and how often, as tf.estimator's EvalSpec.

    Args:
      input_fn: the evaluation input_fn, as Estimator.evaluate takes it.
      steps: batches per evaluation; None: until the input ends.
      name: the evaluation's name: its events go to model_dir/eval_<name> (model_dir/eval without one); several
        EvalSpecs need distinct names.
      hooks: common.hooks.Hook objects (or TF1 SessionRunHooks) run while evaluating.
      exporters: one common Exporter or a list of them, run after each evaluation.
      throttle_secs: evaluate at a checkpoint only when this many seconds have passed since the last
        evaluation (the final one always runs).
      start_delay_secs: for a separate evaluator task, the wait before its first evaluation; train_and_evaluate
        on one host ignores it, as tf.estimator's did.
    Raises:
      ValueError: steps is not positive, or a time is negative.
      TypeError: an exporter is not an Exporter.
    """

    input_fn: Callable
    steps: Optional[int] = 100
    name: Optional[str] = None
    hooks: Sequence[Hook] = ()
    exporters: Sequence = ()
    throttle_secs: float = 600
    start_delay_secs: float = 120

    def __post_init__(self):
        if self.steps is not None and self.steps <= 0:
            raise ValueError(f"EvalSpec: steps must be > 0 or None, got {self.steps}")
        if self.exporters is None:
            self.exporters = ()
        elif not isinstance(self.exporters, (list, tuple)):
            self.exporters = (self.exporters,)
        for exporter in self.exporters:
            if not hasattr(exporter, "export") or not hasattr(exporter, "name"):
                raise TypeError(f"EvalSpec: exporters must be common.exporters.Exporter objects, got {exporter!r}")
        for name in ("throttle_secs", "start_delay_secs"):
            if getattr(self, name) < 0:
                raise ValueError(f"EvalSpec: {name} must be >= 0, got {getattr(self, name)}")

    @property
    def key(self):
        """The spec's name, or "eval": what its results and exports are keyed by."""
        return self.name or "eval"


def train_on(estimator, train_spec, saving_listeners=None):
    """Trains `estimator` as train_spec says (its input_fn, hooks and max_steps)."""
    return estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                           saving_listeners=saving_listeners)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains, evaluating (and exporting) after each checkpoint and at the end, as tf.estimator's local mode.

    After a checkpoint is saved, each EvalSpec is evaluated if its throttle_secs have passed since its last
    evaluation; a final evaluation follows the last step; the spec's exporters run after each evaluation. On
    the evaluator task (TF_CONFIG's, or the mains' --mode=evaluate_continuously) it trains nothing and
    evaluates the chief's checkpoints as they appear (common.training.evaluator).

    Args:
      estimator: the Estimator to train.
      train_spec: a TrainSpec.
      eval_spec: an EvalSpec, or a list of them with distinct names (each writes its summaries to
        model_dir/eval_<name>).
    Returns:
      (final metrics, export paths): for one EvalSpec its metrics dict and the paths its exporters wrote after
      the final evaluation; for a list, both keyed by spec name; (None, None) on a non-chief host.
    Raises:
      ValueError: EvalSpecs or exporters without distinct names; several EvalSpecs on the evaluator task.
    """
    eval_specs = list(eval_spec) if isinstance(eval_spec, (list, tuple)) else [eval_spec]
    keys = [spec.key for spec in eval_specs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"EvalSpecs need distinct names, got {keys}")
    exporter_names = [exporter.name for spec in eval_specs for exporter in spec.exporters]
    if len(set(exporter_names)) != len(exporter_names):
        raise ValueError(f"exporters need distinct names (each writes to model_dir/export/<name>), "
                         f"got {exporter_names}")
    if estimator.is_evaluator:
        if len(eval_specs) != 1:
            raise ValueError("the evaluator task evaluates one EvalSpec")
        return evaluator.run_evaluator(estimator, train_spec, eval_specs[0])
    listener = evaluations.Evaluations(eval_specs, train_spec.max_steps)
    if not estimator.is_chief:  # across hosts, the chief alone evaluates
        train_on(estimator, train_spec)
        return None, None
    preflight.check_exporters(estimator.model_dir, eval_specs)  # before step 1, not at the first export
    fresh = [] if estimator.latest_checkpoint() else [preflight.SpaceCheck(eval_specs)]  # (at its step-0 save)
    train_on(estimator, train_spec, saving_listeners=fresh + [listener])
    latest = estimator.latest_checkpoint()
    final_step = int(estimator.get_variable_value("global_step")) if latest else None
    for spec in eval_specs:
        if listener.last_step.get(spec.key) != final_step:
            listener.evaluate(estimator, final_step, spec, final=True)
        elif spec.key not in listener.final_exported:  # evaluated at the last save, before training ended
            listener.export(estimator, spec, final=True)
    for key, metrics in listener.results.items():
        logging.info("Final evaluation %s: %s", key, metrics)
    for failure in listener.export_failures:
        logging.error("This run's export that failed: %s", failure)
    if isinstance(eval_spec, (list, tuple)):
        return dict(listener.results), dict(listener.exports)
    return listener.results[eval_specs[0].key], listener.exports[eval_specs[0].key]
