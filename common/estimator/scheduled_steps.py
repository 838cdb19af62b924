"""The train steps of a parameter-server job: each scheduled on whichever worker is free.

train_loop.run asks for `count` steps at a time (RunConfig.steps_per_loop);
here they become `count` closures handed to the chief's ClusterCoordinator.
Each runs on a worker: one batch of that worker's shard of input_fn's data
through the towers on the worker's devices, its update applied to the ps
variables at once; no worker waits for another (as tf.estimator's
between-graph workers did not). The chief then waits for the closures, so
its hooks, summaries and checkpoints come between steps, at the global step
the ps tasks hold. A worker that dies is retried by the coordinator on
another (a step may then run twice: at least once, as the engine allows).
"""

import tensorflow as tf

from common.engine import inputs, loops
from common.spec.model_fn import ModeKeys


def step_runner(parts, input_fn, values):
    """run_steps(count, wanted) for train_loop.run on a ParameterServerCluster chief; values: the names every
    step returns (the others `wanted` are tensors of model_fn's graph a hook asked for)."""
    cluster, model, step = parts.cluster, parts.model, parts.step

    def worker_dataset():
        dataset = inputs.dataset_for_run(input_fn, ModeKeys.TRAIN, parts.params, parts.config)
        worker = tf.distribute.coordinator.experimental_get_current_worker_index()
        return dataset.shard(cluster.worker_tasks, worker)

    with parts.model.scope():
        iterator = iter(cluster.coordinator.create_per_worker_dataset(worker_dataset))
    functions = {}

    def scheduled(named):
        if named not in functions:
            def one_step(worker_iterator):
                batch = next(worker_iterator)
                return cluster.strategy.run(lambda b: step.train_step(b, model.train_variables, named),
                                            args=(batch,))
            functions[named] = tf.function(one_step, autograph=False)
        return functions[named]

    def run_steps(count, wanted):
        named = tuple(sorted(set(wanted) - set(values)))
        function = scheduled(named)
        with parts.model.scope(), cluster.reporting_lost_workers():
            results = [cluster.coordinator.schedule(function, args=(iterator,)) for _ in range(count)]
            try:
                cluster.coordinator.join()
                exhausted = False
            except tf.errors.OutOfRangeError:  # some worker's shard ran out
                exhausted = True
            done = [fetched for fetched in map(_fetched_or_none, results) if fetched is not None]
        if not done:
            return loops.LoopResult(0, True, {})
        return loops.LoopResult(len(done), exhausted, {name: tf.constant(value) for name, value in done[-1].items()})

    return run_steps


def _fetched_or_none(result):
    try:
        return result.fetch()
    except tf.errors.OutOfRangeError:
        return None
