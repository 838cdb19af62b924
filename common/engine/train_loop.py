"""The outer train loop: calls of the compiled loop, hooks, stopping.

It knows nothing of model_fn, towers or checkpoints: it is handed a
function that runs up to N steps, the hooks and their RunContext, as
tf.estimator's Estimator handed its hooks to a MonitoredSession. Every stop
rule is a hook that requests a stop (StopAtStepHook for steps / max_steps,
NanTensorHook, signals.StopOnSignalHook); the loop also ends when the input
runs out. Each call runs as many steps as the hooks allow before the next
one wants a boundary: up to steps_per_loop, or, with steps_per_loop None
(RunConfig's default), as many as run in about AUTO_CALL_SECONDS at the
last call's pace (a model whose step takes longer runs one step a call).
"""

import math
import time

from tensorflow.compat.v1 import logging

# With steps_per_loop None: about how long one compiled call may run before the hooks hear of it (a seconds
# trigger, a stop signal, the evaluation throttle wait no longer than this past their time).
AUTO_CALL_SECONDS = 0.25


class _CallSize:
    """How many steps the next call may run (before the hooks cut it): steps_per_loop, or with None as many
    as the last call's pace fits in AUTO_CALL_SECONDS (one at the first call, which traces and compiles)."""

    def __init__(self, steps_per_loop):
        self._fixed = steps_per_loop
        self._seconds_per_step = None

    def steps(self):
        if self._fixed is not None:
            return self._fixed
        if self._seconds_per_step is None:
            return 1
        return max(1, int(AUTO_CALL_SECONDS / max(self._seconds_per_step, 1e-6)))

    def ran(self, steps, seconds):
        if steps:
            self._seconds_per_step = seconds / steps


def _steps_until_a_hook_fires(hooks, step, steps_per_loop):
    count = steps_per_loop
    for hook in hooks:
        trigger = hook.steps_to_trigger(step)
        if trigger:
            count = min(count, math.ceil(trigger))  # (a hook's float: a call runs whole steps)
    return count


def run(run_steps, read_global_step, hooks, context, steps_per_loop, clock=time.perf_counter):
    """Trains until a hook requests a stop or the input is exhausted.

    run_steps(count, wanted) -> loops.LoopResult whose values hold at least
    the names in `wanted` when all steps ran; read_global_step() -> int; steps_per_loop: the most steps a
    call runs, None to size calls by their pace. Returns the last step's loss (numpy), or None when no step
    ran.
    """
    for hook in hooks:
        hook.begin(context)
    step, final_loss, call_size = context.start_step, None, _CallSize(steps_per_loop)
    while not context.stop_requested:
        count = _steps_until_a_hook_fires(hooks, step, call_size.steps())
        context.steps_coming = count
        wanted = set()
        for hook in hooks:
            wanted.update(hook.before_step(step))
        started = clock()
        result = run_steps(count, wanted - {"global_step"})
        call_size.ran(result.steps, clock() - started)
        if result.steps == 0:
            break
        step = read_global_step()
        fetched = {name: result.values[name].numpy() for name in wanted if name in result.values}
        fetched["global_step"] = step
        final_loss = result.values["loss"].numpy()
        for hook in hooks:
            hook.after_step(step, fetched, context)
        if result.exhausted:
            break
    _end(hooks, step, context)
    return final_loss


def _end(hooks, step, context):
    """Ends every hook, even after one raised (the checkpoint saver's end writes the final checkpoint), then
    raises the first error, as tf.estimator's session kept its final checkpoint."""
    errors = []
    for hook in hooks:
        try:
            hook.end(step, context)
        except Exception as error:  # noqa: BLE001 -- re-raised below, after the other hooks ended
            logging.error("%s.end() raised %s: %s; the other hooks still end, then it is raised",
                          type(hook).__name__, type(error).__name__, error)
            errors.append(error)
    if errors:
        raise errors[0]
