"""The evaluations of train_and_evaluate and of the evaluator: each EvalSpec
evaluated when its throttle allows, then its exporters run, told whether
the evaluation is the final one. An export the file system refuses is logged
and recorded (export_failures); training goes on."""

import os
import time

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.hooks.triggers import Trigger


class Evaluations:
    """A saving listener that evaluates each spec when its throttle allows,
    then runs its exporters; the evaluator calls it for each checkpoint."""

    def __init__(self, eval_specs, max_steps, clock=time.time):
        self._specs = eval_specs
        self._max_steps = max_steps
        self._throttles = {spec.key: Trigger(every_secs=spec.throttle_secs, clock=clock) for spec in eval_specs}
        self.results = {}
        self.last_step = {}
        self.exports = {}  # spec key -> paths its exporters wrote after its last evaluation
        self.final_exported = set()
        self.export_failures = []  # what each export that failed on the file system said

    def throttle_allows(self, spec, step):
        """Whether throttle_secs have passed since the spec's last evaluation began (or there was none)."""
        return self._throttles[spec.key].should_trigger(step)

    def evaluate(self, estimator, step, spec, final=False, checkpoint_path=None):
        """Evaluates the newest checkpoint (or checkpoint_path) at `step`, then exports;
        `final`, or a step at max_steps, makes it the final evaluation."""
        self._throttles[spec.key].update(step)  # (the throttle counts from an evaluation's start, as tf.estimator's)
        self.results[spec.key] = estimator.evaluate(
            spec.input_fn, steps=spec.steps, hooks=spec.hooks, name=spec.name, checkpoint_path=checkpoint_path)
        self.last_step[spec.key] = step
        self.export(estimator, spec, final or (self._max_steps is not None and step >= self._max_steps),
                    checkpoint_path)

    def export(self, estimator, spec, final, checkpoint_path=None):
        paths = []
        checkpoint = checkpoint_path or estimator.latest_checkpoint() if spec.exporters else None
        for exporter in spec.exporters:
            folder = os.path.join(estimator.model_dir, "export", exporter.name)
            try:
                path = exporter.export(estimator, folder, checkpoint, self.results[spec.key], final)
            except (OSError, tf.errors.OpError) as error:  # the file system's: the model is not at fault
                failure = (f"exporter {exporter.name!r} could not export {checkpoint} to {folder}: "
                           f"{getattr(error, 'message', None) or error}")
                logging.error("%s; training goes on", failure)
                self.export_failures.append(failure)
                continue
            if path is not None:
                paths.append(path)
        self.exports[spec.key] = paths
        if final:
            self.final_exported.add(spec.key)

    def after_save(self, estimator, step):
        for spec in self._specs:
            if self.throttle_allows(spec, step):
                self.evaluate(estimator, step, spec)
