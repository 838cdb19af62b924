"""tf.estimator.experimental.InMemoryEvaluatorHook: evaluation of the model as it trains, with no checkpoint.

TF1's hook built the eval graph once, copied the training session's
variables into it and ran the evaluation: before the first step, every N
iterations after the last evaluation, and at the end of the run, each
logged ("Saving dict for global step N: ...") and written to
model_dir/eval_<name> as evaluate() writes. Here the Estimator evaluates
the variables training holds, in place (the evaluation's model is the
training's): nothing is copied, and no checkpoint is read or written.
"""

from common.hooks.protocol import Hook


class InMemoryEvaluatorHook(Hook):
    """Evaluates `estimator` on input_fn while it trains, at TF1's moments (see the module).

    Args:
      estimator: the Estimator being trained (the hook goes to its train() or to a TrainSpec).
      input_fn: the evaluation's input_fn, as for evaluate().
      steps: batches per evaluation; None: until the input ends.
      hooks: hooks of each evaluation, as evaluate()'s.
      name: the evaluation's name (its events go to model_dir/eval_<name>), as evaluate()'s.
      every_n_iter: evaluate after every this many training steps since the last evaluation.

    Raises:
      ValueError: every_n_iter is not positive, or the estimator trains on several hosts or with parameter
        servers (TF1's hook was for one machine: it said "InMemoryEvaluator supports only single machine (aka
        Local) setting.").
    """

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None, every_n_iter=100):
        if every_n_iter is None or every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError("InMemoryEvaluator supports only single machine (aka Local) setting.")
        self._estimator = estimator
        self._evaluation = dict(input_fn=input_fn, steps=steps, hooks=list(hooks or ()), name=name)
        self._every_n_iter = every_n_iter
        self._last_evaluated = None  # the global step of the last evaluation
        self.results = []  # (global step, evaluate()'s results) of each evaluation, in order

    def begin(self, context):
        self._last_evaluated = context.start_step
        self._evaluate(context.start_step)

    def steps_to_trigger(self, step):
        return max(1, self._last_evaluated + self._every_n_iter - step)

    def after_step(self, step, values, context):
        if step - self._last_evaluated >= self._every_n_iter:
            self._evaluate(step)

    def end(self, step, context):
        self._evaluate(step)

    def _evaluate(self, step):
        self._last_evaluated = step
        self.results.append((step, self._estimator._evaluate_in_memory(**self._evaluation)))
