"""The outer evaluation loop: sums the compiled eval loop's totals, runs
hooks, turns the totals into results and writes them for TensorBoard."""

import os
import time

import numpy as np
import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.engine import loops
from common.state import summaries

UNHOOKED_BATCHES = 100  # batches a compiled call runs when no hook hears each (and the steps are not given)


def starting():
    """Logs tf.estimator's "Starting evaluation at ..." line (before the checkpoint is restored, as its came);
    returns the time, which run() counts the inference time from."""
    started = time.time()
    logging.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)))
    return started


def run(run_batches, hooks, context, steps, steps_per_loop, started=None):
    """Sums totals over `steps` batches (None: until the input ends).

    run_batches(count, wanted) -> loops.LoopResult whose values are {total: tensor}, and the last batch's
    tensors of model_fn's graph named in `wanted` (see fetching_last).
    Hooks are asked before each call of `steps_per_loop` batches (before_step: TF1 hooks' before_run) and
    see the running mean loss, and the tensors they asked for, after it; with no hooks, a call runs
    up to a tenth of the steps (UNHOOKED_BATCHES, steps None): the Python between calls cost a third of
    the time of a small model's batch. Logs tf.estimator's
    lines: "Evaluation [n/steps]" a tenth of the steps apart (none with steps
    None, as tf.estimator), the time taken and its end. Returns the summed
    totals as numpy; ValueError when no batch ran. started: what starting() returned (None: it is called
    here).
    """
    for hook in hooks:
        hook.begin(context)
    started = starting() if started is None else started
    every = 1 if steps is None or steps < 20 else steps // 10  # tf.estimator's progress lines: a tenth apart
    steps_per_loop = steps_per_loop or 1  # (None: RunConfig's default, one batch a call for hooks that hear each)
    if not hooks:  # no hook hears each batch: as many batches a call as the progress lines allow
        steps_per_loop = max(steps_per_loop, UNHOOKED_BATCHES if steps is None else every)
    totals, done, exhausted = None, 0, False
    evaluated_step = None if context.global_step is None else int(context.global_step.numpy())
    while not exhausted and (steps is None or done < steps) and not context.stop_requested:
        count = steps_per_loop if steps is None else min(steps_per_loop, steps - done)
        wanted = set()
        for hook in hooks:
            wanted.update(hook.before_step(done) or ())
        result = run_batches(count, wanted - {"loss", "global_step"})
        exhausted = result.exhausted
        if result.steps == 0:
            break
        if steps is not None and ((done + result.steps) // every > done // every or done + result.steps == steps):
            logging.info("Evaluation [%d/%d]", done + result.steps, steps)
        done += result.steps
        named = {k: v.numpy() for k, v in result.values.items() if k in wanted}
        batch_totals = {k: v.numpy() for k, v in result.values.items() if k not in wanted}
        totals = batch_totals if totals is None else {k: totals[k] + batch_totals[k] for k in totals}
        named.update(loss=totals["batch_loss_sum"] / max(totals["batches"], 1), global_step=evaluated_step)
        for hook in hooks:
            hook.after_step(done, named, context)
    if totals is None or totals["count"] == 0:
        raise ValueError("evaluate: input_fn yielded no data")
    for hook in hooks:
        hook.end(done, context)
    logging.info("Inference Time : %.5fs", time.time() - started)
    logging.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S"))  # (tf.estimator's format)
    return totals


def fetching_last(run_batches, fetch):
    """run(count, wanted) for `run`: `count` batches summed by run_batches(count); when hooks want tensors of
    model_fn's graph, the last batch alone by fetch(named) (a step whose values are its totals and those
    tensors), as a TF1 evaluation hook got them from the session.run of each batch."""

    def run(count, wanted):
        named = tuple(sorted(wanted))
        if not named:
            return run_batches(count)
        before = run_batches(count - 1) if count > 1 else loops.LoopResult(0, False, {})
        if before.exhausted or before.steps < count - 1:
            return before
        last = fetch(named)
        if not last.steps:
            return before._replace(exhausted=True)
        values = {k: v + before.values[k] if k in before.values else v for k, v in last.values.items()}
        return loops.LoopResult(before.steps + 1, last.exhausted, values)
    return run


def results(totals, metric_results):
    """{metric name: value, "loss": the mean of the batches' mean losses} from
    summed totals (tf.estimator's loss metric; a short last batch weighs as much
    as a full one)."""
    values = {}
    for name, result in metric_results.items():
        prefix = name + "/"
        values[name] = _as_metric_value(result({k[len(prefix):]: v for k, v in totals.items() if k.startswith(prefix)}))
    values["loss"] = _as_metric_value(totals["batch_loss_sum"] / totals["batches"])
    return values


def _as_metric_value(value):
    """tf.estimator's results were its float32 metric variables' values: a float becomes a numpy float32
    (a program's `.item()` or `np.float32` check holds), a float array a float32 one."""
    value = np.asarray(value)
    if value.dtype.kind == "f":
        value = value.astype(np.float32)
    return value[()] if value.ndim == 0 else value


def eval_dir(model_dir, name=None):
    """Where an evaluation's events go: model_dir/eval, or eval_<name>."""
    return os.path.join(model_dir, "eval" if not name else f"eval_{name}")


def write_results(model_dir, name, results_at_step, checkpoint_path=None):
    """Logs the results and writes them to eval_dir(model_dir, name), with the
    path of the checkpoint evaluated (tag checkpoint_path) where there was one."""
    directory = eval_dir(model_dir, name)
    step = results_at_step["global_step"]
    text = ", ".join(f"{k} = {v!s}" for k, v in sorted(results_at_step.items()))  # (numpy's str, as tf.estimator)
    logging.info("Saving dict for global step %d: %s", step, text)
    writer = tf.summary.create_file_writer(directory)
    summaries.write_scalars(writer, step, {k: v for k, v in results_at_step.items()  # (as tf.estimator: no arrays)
                                           if k != "global_step" and np.ndim(v) == 0})
    if checkpoint_path:
        summaries.write_text(writer, step, "checkpoint_path", checkpoint_path)
        logging.info("Saving 'checkpoint_path' summary for global step %d: %s", step, checkpoint_path)
    writer.close()
