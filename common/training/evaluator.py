"""The evaluator: evaluates the chief's checkpoints as they appear, each once.

tf.estimator's evaluator task (TF_CONFIG task type "evaluator"), which
train_and_evaluate runs there, and the mains' --mode=evaluate_continuously.
It waits start_delay_secs, then polls model_dir: each checkpoint not yet
evaluated (none whose step the eval events already hold; not the untrained
step-0 state, which train_and_evaluate does not evaluate either) is
evaluated, oldest first (one the chief deleted before its turn is skipped
with a warning), its results written to the eval dir and the EvalSpec's
exporters run. With throttle_secs (tf.estimator's default is 600; the
mains give 0), as tf.estimator's evaluator: the newest checkpoint only,
at most once per throttle_secs, the last step's at once. It ends after the checkpoint of the last training step
(train_spec.max_steps), or, when training stops short of it, once the
chief's process has ended (its writer lock in model_dir says which process;
on this host only) and its last checkpoint is evaluated. An evaluator that
finds the lock's process already gone waits idle_secs for a new checkpoint
(a chief starting again) before it ends.
"""

import os
import time

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state import model_dir_lock, summaries
from common.state.checkpoint_store import CheckpointStore
from common.state.checkpoints import CheckpointDamagedError
from common.training import evaluations


class NothingToEvaluateError(RuntimeError):
    """No checkpoint appeared in the model dir, and no run trains there, within the evaluator's wait."""


def run_evaluator(estimator, train_spec, eval_spec, poll_secs=1.0, idle_secs=60.0, clock=time.time,
                  sleep=time.sleep, first_checkpoint_secs=1800.0):
    """Evaluates until training has ended; returns (the last metrics, the paths the
    last evaluation's exporters wrote), as train_and_evaluate does. Raises
    NothingToEvaluateError when, for first_checkpoint_secs, the model dir holds no
    checkpoint and no run holds its writer lock (a mistyped --model_dir)."""
    model_dir = estimator.model_dir
    max_steps = train_spec.max_steps
    store = CheckpointStore(model_dir)
    done_evaluations = evaluations.Evaluations([eval_spec], max_steps, clock=clock)
    if eval_spec.start_delay_secs:
        logging.info("Evaluator: waiting %s s before the first evaluation.", eval_spec.start_delay_secs)
        sleep(eval_spec.start_delay_secs)
    eval_events = tf.io.gfile.glob(os.path.join(estimator.eval_dir(eval_spec.name), "events.out.tfevents.*"))
    done = set(summaries.metrics_by_step(eval_events)) | {0}
    seen, chief_seen, last_news, started = set(done), False, clock(), clock()
    logging.info("Evaluator: evaluating the checkpoints of %s as they appear (giving up after %s s if none does "
                 "and no run trains there).", model_dir, first_checkpoint_secs)
    while True:
        listed = sorted(store.listed())
        if any(step not in seen for step, _ in listed):
            seen.update(step for step, _ in listed)
            last_news = clock()
        for step, prefix in _due(listed, done, eval_spec, max_steps, done_evaluations):
            done.add(step)
            if not tf.io.gfile.exists(prefix + ".index"):
                logging.warning("Evaluator: %s was deleted before it could be evaluated.", prefix)
                continue
            model_dir_lock.hold_evaluator(estimator.eval_dir(eval_spec.name))  # (a second one is refused here)
            try:
                done_evaluations.evaluate(estimator, step, eval_spec, checkpoint_path=prefix)
            except CheckpointDamagedError as error:  # as training does: passed over, the next one evaluated
                logging.warning("Evaluator: checkpoint damaged, passed over: %s", error)
                continue
            if max_steps is not None and step >= max_steps:
                logging.info("Exiting evaluation, global_step=%d >= train max_steps=%d", step, max_steps)
                return _outcome(done_evaluations, eval_spec)
        alive = model_dir_lock.writer_alive(model_dir)
        chief_seen = chief_seen or alive is True
        if not seen - {0} and not listed and alive is not True and clock() - started >= first_checkpoint_secs:
            state = "it holds no checkpoint" if tf.io.gfile.exists(model_dir) else "the folder does not exist"
            raise NothingToEvaluateError(
                f"Evaluator: no checkpoint appeared in {model_dir} in {first_checkpoint_secs:g} s, and no run "
                f"trains there ({state}): is the model dir right? Start the chief, then the evaluator.")
        after = dict(store.listed())  # (listed again: the chief may have saved while this one evaluated)
        ended = alive is False or (chief_seen and alive is None)  # (a clean exit removes its lock file)
        if ended and set(after) <= done and (chief_seen or clock() - last_news >= idle_secs):
            logging.info("Exiting evaluation: the chief has ended; its last checkpoint (global step %s) is "
                         "evaluated.", max(done))
            if eval_spec.key in done_evaluations.results and eval_spec.key not in done_evaluations.final_exported:
                done_evaluations.export(estimator, eval_spec, final=True, checkpoint_path=after.get(max(done)))
            return _outcome(done_evaluations, eval_spec)
        sleep(poll_secs)


def _due(listed, done, eval_spec, max_steps, done_evaluations):
    """The checkpoints to evaluate now: every one waiting, oldest first; with
    throttle_secs, as tf.estimator's evaluator, only the newest, once the
    throttle allows (at once for the last step), the older ones marked done
    unevaluated."""
    waiting = [(step, prefix) for step, prefix in listed if step not in done]
    if not waiting or not eval_spec.throttle_secs:
        return waiting
    newest = waiting[-1][0]
    if not (max_steps is not None and newest >= max_steps) and not done_evaluations.throttle_allows(eval_spec, newest):
        return []
    if len(waiting) > 1:
        logging.info("Evaluator: throttle_secs=%s: evaluating global step %d, skipping %s.", eval_spec.throttle_secs,
                     newest, ", ".join(str(step) for step, _ in waiting[:-1]))
        done.update(step for step, _ in waiting[:-1])
    return waiting[-1:]


def _outcome(done_evaluations, eval_spec):
    return done_evaluations.results.get(eval_spec.key), done_evaluations.exports.get(eval_spec.key, [])
