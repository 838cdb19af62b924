"""What one Estimator.train() call assembles: input, restored state, hooks, the loop.

The order keeps a refused run from touching model_dir: input_fn's dataset
and model_fn's spec are checked (the TRAIN probe), the state restored, and
only then is the writer lock taken and anything written. The loop itself is
common.engine.train_loop's; this module gives it the function that runs N
steps (with a separate, fetching step when hooks ask for tensors of
model_fn's graph), the hooks in tf.estimator's order, and the save
function the checkpoint hooks call.
"""

import contextlib
import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.adapters import session_run_hooks
from common.devices import parameter_servers
from common.engine import first_steps, inference_trace, inputs, loops, startup, train_loop
from common.engine import step as step_module
from common.estimator import scheduled_steps
from common.estimator.parts import user_hooks
from common.hooks import signals
from common.hooks.protocol import Hook, RunContext
from common.hooks.reporting import LoggingTensorHook, ProgressHook, StepCounterHook
from common.hooks.saving import CheckpointSaverHook, SummarySaverHook
from common.hooks.stopping import NanTensorHook, StopAtStepHook
from common.spec.model_fn import ModeKeys
from common.state import checkpoints, model_dir_lock, vocabularies


def default_hooks(config, steps, max_steps, batch_size):
    """tf.estimator's hooks for a train() call: the stop rule, the NaN check, the
    loss and steps/sec log lines (and progress), the summaries."""
    stops = steps or max_steps
    hooks = [StopAtStepHook(num_steps=steps, last_step=max_steps)] if stops else []
    hooks.append(NanTensorHook())
    if config.log_step_count_steps:  # (the step rate first: tf.estimator logged global_step/sec before the loss)
        hooks.append(StepCounterHook(every_n_steps=config.log_step_count_steps))
        hooks.append(LoggingTensorHook({"loss": "loss", "step": "global_step"},
                                       every_n_iter=config.log_step_count_steps))
        if stops:
            hooks.append(ProgressHook(num_steps=steps, last_step=max_steps, batch_size=batch_size,
                                      every_n_steps=config.log_step_count_steps))
    if config.save_summary_steps:
        hooks.append(SummarySaverHook(save_steps=config.save_summary_steps))
    return hooks


def _check_checkpoint_dirs(savers, model_dir):
    for saver in savers:
        if saver.checkpoint_dir and os.path.abspath(saver.checkpoint_dir) != os.path.abspath(model_dir):
            raise ValueError(f"CheckpointSaverHook(checkpoint_dir={saver.checkpoint_dir!r}): checkpoints go to "
                             f"the estimator's model_dir, {model_dir}")


def _restore_input(iterator, restored):
    if checkpoints.restore_input(restored, iterator):
        logging.info("Restored the input pipeline's position from %s.", restored)
    else:
        logging.info("%s holds no input pipeline state; the input starts from the beginning.", restored)


def _probed_step(parts):
    """The tf.function of the train step that is also the TRAIN probe (model_fn traced once for both), or None
    where the step cannot be (TowerStep.probes_in_step)."""
    if not parts.step.probes_in_step:
        return None
    return parts.loops.get("train step", lambda: tf.function(parts.step.train_step, autograph=False))


@contextlib.contextmanager
def _step_runner(parts, iterator, values, clock, to_go):
    """A context giving run_steps(count, wanted) for train_loop.run: `count` steps in the compiled loop (with
    RunConfig's steps_per_loop None, the first steps alone while it compiles, or all `to_go` of a short run:
    common.engine.first_steps); when hooks want tensors of model_fn's graph, the last runs alone to fetch them.
    The first call's start-up is split on `clock`."""
    model, step = parts.model, parts.step
    probe = _probed_step(parts)
    loop = parts.loops.get("train", lambda: loops.make_train_loop(
        probe or (lambda batch: step.train_step(batch, model.train_variables)), values, step.compiles_whole_step))

    def fetching_step(named):
        return parts.loops.get(("fetch", named), lambda: loops.make_fetching_step(
            lambda batch: step.train_step(batch, model.train_variables, named), step.compiles_whole_step))

    with first_steps.FirstStepsWhileCompiling(loop, probe, iterator, to_go, parts.config.steps_per_loop) as calls:
        def run_steps(count, wanted):
            named = tuple(sorted(set(wanted) - set(values)))
            if not named:
                return parts.run_in_scope(calls, count)
            before = loops.LoopResult(0, False, {})
            if count > 1:
                before = parts.run_in_scope(calls, count - 1)
                if before.exhausted or before.steps < count - 1:
                    return before
            last = parts.run_in_scope(fetching_step(named), iterator)
            if not last.steps:
                return before._replace(exhausted=True)
            return last._replace(steps=before.steps + 1)

        trace = None if calls.first_step_alone else (lambda: parts.run_in_scope(loop.trace, iterator))
        yield startup.timing_first_call(run_steps, clock, trace, ("step", "steps"))


def train(estimator, parts, source, hooks, steps, max_steps, saving_listeners):
    """Trains for `steps` more steps, up to global step `max_steps`, or until the
    input runs out (see Estimator.train)."""
    config, model, state = parts.config, parts.model, parts.state
    clock = startup.StartupClock("train()")
    dataset = inputs.dataset_for_run(source, ModeKeys.TRAIN, parts.params, config)
    clock.lap("input_fn")
    scheduling = isinstance(parts.cluster, parameter_servers.ParameterServerCluster)
    with parts.cluster.variable_scope():  # (a parameter-server job's: its variables on the ps tasks)
        info = model.probe_dataset(ModeKeys.TRAIN, dataset, _probed_step(parts))
        named_state = model.named_state(with_optimizer=True)
    clock.lap("tracing model_fn")
    restored = state.restore(ModeKeys.TRAIN, info=info)
    model_dir = state.store.model_dir
    if parts.cluster.is_chief:  # the first write: after every check, so a refused run leaves model_dir as it was
        model_dir_lock.hold(model_dir)
        vocabularies.record(model_dir, model.vocabulary_files, fresh=not restored)
    state.store.remove_partial_saves()
    parts.cluster.broadcast_from_chief(named_state.values())
    start = int(model.global_step.numpy())
    if max_steps is not None and start >= max_steps:
        logging.info("Skipping training since max_steps has already saved.")
        return
    if restored:
        logging.info("Restored %s; resuming training at global step %d.", restored, start)
    iterator = None if scheduling else iter(dataset)  # (a parameter-server job's workers read their own)
    # Across hosts only the chief keeps checkpoints, so no host's input position could be restored.
    input_state = iterator if config.checkpoint_input_pipeline and parts.cluster.num_workers == 1 else None
    if input_state is not None and restored:
        _restore_input(iterator, restored)
    run_hooks = user_hooks(list(hooks or ()) + list(info.chief_hooks if parts.cluster.is_chief else ()), info)
    savers = [h for h in run_hooks if isinstance(h, CheckpointSaverHook)]
    _check_checkpoint_dirs(savers, estimator.model_dir)
    listeners = session_run_hooks.adapt_listeners(
        list(saving_listeners or ()) + [x for saver in savers[:1] for x in saver.listeners])

    optimizer_names = model.optimizer_state_names()
    scaffold_checkpoint = model.scaffold_checkpoint()

    saved_state, saved_optimizer_names = state.save_state(named_state, optimizer_names)

    def save(step, initial):
        model.sync_step_views()  # (a Scaffold's checkpoint holds the first tower's view of the step)
        logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)  # (tf.estimator's lines)
        path = state.store.save(  # (the .meta's graph: traced after the first steps, not before them)
            step, saved_state, input_state, saved_optimizer_names, scaffold_checkpoint,
            inference=None if initial else lambda: inference_trace.predict_function(model, dataset.element_spec))
        logging.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        for listener in listeners:
            if not initial or getattr(listener, "hears_initial_save", False):
                listener.after_save(estimator, step)
        return path

    cluster_stop = None
    if parts.step.stop_signal is not None:
        cluster_stop = signals.ClusterStop(parts.step.stop_signal, parts.cluster.is_chief, estimator.model_dir)
    values = ("loss",) + (("learning_rate",) if info.learning_rate else ()) + info.scalars \
        + ((signals.STOP_VALUE,) if cluster_stop else ())
    writer = tf.summary.create_file_writer(model_dir)
    context = RunContext(model_dir, values + ("global_step",), start, writer, save, state.store.latest,
                         info.graph_tensors, model.global_step, info.summary_tensors,
                         summary_scope=step_module.tower_scope(0), tf1_collections=info.tf1_collections,
                         step_read_after_update=info.counts_steps_itself)
    try:
        with loops.releasing_failed_frames(), signals.StopRequests() as stop_requests:
            if not savers:
                logging.info("Create CheckpointSaverHook.")
            default_saver = [] if savers else [CheckpointSaverHook(
                save_steps=config.save_checkpoints_steps, save_secs=config.save_checkpoints_secs)]
            all_hooks = (default_hooks(config, steps, max_steps, inputs.global_batch_size(dataset))
                         + run_hooks + default_saver
                         + [x for x in listeners if isinstance(x, Hook)]  # TF1 listeners' begin/end
                         + [signals.StopOnSignalHook(stop_requests, cluster_stop)])
            runner = contextlib.nullcontext(scheduled_steps.step_runner(parts, source, values)) if scheduling \
                else _step_runner(parts, iterator, values, clock, first_steps.steps_to_go(
                    dataset, steps if max_steps is None else max_steps - start))
            with runner as run_steps, \
                    parts.cluster.reporting_lost_workers() if scheduling else contextlib.nullcontext():
                final_loss = train_loop.run(run_steps, lambda: int(model.global_step.numpy()), all_hooks, context,
                                            config.steps_per_loop)
    except signals.TrainingInterrupted as stopped:
        if scheduling:  # the serving tasks end with the chief, saying why
            parts.cluster.finish(model_dir, str(stopped))
        raise
    finally:
        writer.close()
        iterator = input_state = runner = run_steps = None  # (nothing this frame keeps holds the input: see loops)
    if scheduling:
        parts.cluster.finish(model_dir, f"training ended at global step {int(model.global_step.numpy())}")
    logging.info("Loss for final step: %s.", final_loss)
