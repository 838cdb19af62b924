"""The evaluator: evaluates the chief's checkpoints as they appear, each once.

tf.estimator's evaluator task (TF_CONFIG task type "evaluator"), which
train_and_evaluate runs there, and the mains' --mode=evaluate_continuously.
It waits start_delay_secs, then polls model_dir: each checkpoint not yet
evaluated is evaluated (oldest first; one the chief deleted before its turn
is skipped with a warning), its results written to the eval dir and the
EvalSpec's exporters run. It ends after the checkpoint of the last training
step (train_spec.max_steps), or, when training stops short of it, once the
chief's process has ended (its writer lock in model_dir says which
process, on this host) and its last checkpoint is evaluated.
"""

import time

from absl import logging

import tensorflow as tf

from common import checkpoints, evaluations, model_dir_lock


def run_evaluator(estimator, train_spec, eval_spec, poll_secs=1.0, clock=time.time, sleep=time.sleep):
    """Evaluates until training has ended; returns (the last metrics, the paths the
    last evaluation's exporters wrote), as train_and_evaluate does."""
    model_dir = estimator.model_dir
    max_steps = train_spec.max_steps
    store = checkpoints.CheckpointStore(model_dir)
    done_evaluations = evaluations.Evaluations([eval_spec], max_steps, clock=clock)
    if eval_spec.start_delay_secs:
        logging.info("Evaluator: waiting %s s before the first evaluation.", eval_spec.start_delay_secs)
        sleep(eval_spec.start_delay_secs)
    done, chief_seen = set(), False
    while True:
        for step, prefix in sorted(store.listed()):
            if step in done:
                continue
            done.add(step)
            if not tf.io.gfile.exists(prefix + ".index"):
                logging.warning("Evaluator: %s was deleted before it could be evaluated.", prefix)
                continue
            done_evaluations.evaluate(estimator, step, eval_spec, checkpoint_path=prefix)
            if max_steps is not None and step >= max_steps:
                logging.info("Exiting evaluation, global_step=%d >= train max_steps=%d", step, max_steps)
                return _outcome(done_evaluations, eval_spec)
        alive = model_dir_lock.writer_alive(model_dir)
        chief_seen = chief_seen or alive is True
        if chief_seen and alive is False and all(step in done for step, _ in store.listed()):
            logging.info("Exiting evaluation: the chief has ended; its last checkpoint (global step %s) is "
                         "evaluated.", max(done) if done else None)
            if done and eval_spec.key not in done_evaluations.final_exported:
                done_evaluations.export(estimator, eval_spec, final=True,
                                        checkpoint_path=dict(store.listed()).get(max(done)))
            return _outcome(done_evaluations, eval_spec)
        sleep(poll_secs)


def _outcome(done_evaluations, eval_spec):
    return done_evaluations.results.get(eval_spec.key), done_evaluations.exports.get(eval_spec.key, [])
