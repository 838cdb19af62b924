"""`train_and_evaluate` with TrainSpec and (one or more) EvalSpecs.

As in tf.estimator's local mode: training runs to max_steps; after a
checkpoint is saved, every EvalSpec is evaluated if at least its
throttle_secs have passed since its last evaluation; a final evaluation
follows the last step. After each evaluation the spec's exporters run
(common.exporters), told whether it is the final one.
"""

import dataclasses
import os
import time
from typing import Callable, Optional, Sequence

from absl import logging

from common import hooks as hooks_lib
from common.triggers import Trigger


@dataclasses.dataclass
class TrainSpec:
    input_fn: Callable
    max_steps: Optional[int] = None
    hooks: Sequence[hooks_lib.Hook] = ()

    def __post_init__(self):
        if self.max_steps is not None and self.max_steps <= 0:
            raise ValueError(f"TrainSpec: max_steps must be > 0, got {self.max_steps}")


@dataclasses.dataclass
class EvalSpec:
    """What to evaluate and how often. start_delay_secs is for a separate
    evaluator task; train_and_evaluate on one host ignores it, as tf.estimator's did."""

    input_fn: Callable
    steps: Optional[int] = 100
    name: Optional[str] = None
    hooks: Sequence[hooks_lib.Hook] = ()
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
        return self.name or "eval"


class _EvaluateAfterSave:
    """A saving listener that evaluates each spec when its throttle allows,
    then runs its exporters."""

    def __init__(self, eval_specs, max_steps, clock=time.time):
        self._specs = eval_specs
        self._max_steps = max_steps
        self._throttles = {spec.key: Trigger(every_secs=spec.throttle_secs, clock=clock) for spec in eval_specs}
        self.results = {}
        self.last_step = {}
        self.exports = {}  # spec key -> paths its exporters wrote after its last evaluation
        self.final_exported = set()

    def evaluate(self, estimator, step, spec, final=False):
        self.results[spec.key] = estimator.evaluate(
            spec.input_fn, steps=spec.steps, hooks=spec.hooks, name=spec.name)
        self._throttles[spec.key].update(step)
        self.last_step[spec.key] = step
        self.export(estimator, spec, final or (self._max_steps is not None and step >= self._max_steps))

    def export(self, estimator, spec, final):
        paths = []
        checkpoint = estimator.latest_checkpoint() if spec.exporters else None
        for exporter in spec.exporters:
            path = exporter.export(estimator, os.path.join(estimator.model_dir, "export", exporter.name),
                                   checkpoint, self.results[spec.key], final)
            if path is not None:
                paths.append(path)
        self.exports[spec.key] = paths
        if final:
            self.final_exported.add(spec.key)

    def after_save(self, estimator, step):
        for spec in self._specs:
            if self._throttles[spec.key].should_trigger(step):
                self.evaluate(estimator, step, spec)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates; returns (final metrics, export paths), as tf.estimator
    did: for one EvalSpec its metrics dict and the paths its exporters wrote after
    the final evaluation; for a list, both keyed by spec name. (None, None) on a
    non-chief host of a cluster.

    eval_spec may be one EvalSpec or a list of them with distinct names;
    each writes its summaries to model_dir/eval_<name> (model_dir/eval when
    unnamed).
    """
    eval_specs = list(eval_spec) if isinstance(eval_spec, (list, tuple)) else [eval_spec]
    keys = [spec.key for spec in eval_specs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"EvalSpecs need distinct names, got {keys}")
    exporter_names = [exporter.name for spec in eval_specs for exporter in spec.exporters]
    if len(set(exporter_names)) != len(exporter_names):
        raise ValueError(f"exporters need distinct names (each writes to model_dir/export/<name>), "
                         f"got {exporter_names}")
    listener = _EvaluateAfterSave(eval_specs, train_spec.max_steps)
    if not estimator.is_chief:  # across hosts, the chief alone evaluates
        estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps)
        return None, None
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                    max_steps=train_spec.max_steps, saving_listeners=[listener])
    latest = estimator.latest_checkpoint()
    final_step = int(estimator.get_variable_value("global_step")) if latest else None
    for spec in eval_specs:
        if listener.last_step.get(spec.key) != final_step:
            listener.evaluate(estimator, final_step, spec, final=True)
        elif spec.key not in listener.final_exported:  # evaluated at the last save, before training ended
            listener.export(estimator, spec, final=True)
    for key, metrics in listener.results.items():
        logging.info("Final evaluation %s: %s", key, metrics)
    if isinstance(eval_spec, (list, tuple)):
        return dict(listener.results), dict(listener.exports)
    return listener.results[eval_specs[0].key], listener.exports[eval_specs[0].key]
