"""The train steps of a parameter-server job: each scheduled on whichever worker is free.

train_loop.run asks for `count` steps at a time (RunConfig.steps_per_loop);
here they become one closure per worker handed to the chief's
ClusterCoordinator, each a loop of its share of the steps (common.engine's
train loop). Every step runs on a worker: one batch of that worker's shard
of input_fn's data through the towers on the worker's devices, its update
applied to the ps variables at once; no worker waits for another (as tf.estimator's
between-graph workers did not). The chief then waits for the closures, so
its hooks, summaries and checkpoints come between groups of steps, at the
global step the ps tasks hold. A hook that asks for tensors of model_fn's
graph gets a closure per step instead. A worker that dies has its closure
run again on another (its steps may then run twice: at least once, as the
engine allows).
"""

import tensorflow as tf

from common.engine import inputs, loops
from common.spec.model_fn import ModeKeys


def step_runner(parts, source, values):
    """run_steps(count, wanted) for train_loop.run on a ParameterServerCluster chief; values: the names every
    step returns (the others `wanted` are tensors of model_fn's graph a hook asked for)."""
    cluster, model, step = parts.cluster, parts.model, parts.step

    def worker_dataset():
        dataset = inputs.dataset_for_run(source, ModeKeys.TRAIN, parts.params, parts.config)
        if any(outside.dtype == tf.variant for outside, _ in tf.compat.v1.get_default_graph().captures):
            raise ValueError("input_fn returned a dataset made outside it; in a parameter-server job each worker "
                             "calls input_fn to build its own (as TF1 built it in each graph): make the dataset "
                             "inside input_fn")
        worker = tf.distribute.coordinator.experimental_get_current_worker_index()
        return dataset.shard(cluster.worker_tasks, worker)

    with parts.model.scope():
        iterator = iter(cluster.coordinator.create_per_worker_dataset(worker_dataset))

    def replica_step(named):
        return lambda batch: cluster.strategy.run(lambda b: step.train_step(b, model.train_variables, named),
                                                  args=(batch,))

    loop = loops.make_train_loop(replica_step(()), values).function  # several steps in one closure
    fetching = {}  # named -> the one-step closure that returns those tensors of model_fn's graph too

    def schedule(count, named):
        """[(closure's RemoteValue, whether it is a loop)]: `count` steps spread over the workers, or, with
        `named`, one closure a step (only a step's own closure can return its tensors)."""
        if named:
            if named not in fetching:
                fetching[named] = tf.function(lambda worker_iterator: replica_step(named)(next(worker_iterator)),
                                              autograph=False)
            return [(cluster.coordinator.schedule(fetching[named], args=(iterator,)), False) for _ in range(count)]
        closures = min(cluster.worker_tasks, count)
        sizes = [count // closures + (1 if index < count % closures else 0) for index in range(closures)]
        return [(cluster.coordinator.schedule(loop, args=(iterator, tf.constant(size))), True) for size in sizes]

    def run_steps(count, wanted):
        named = tuple(sorted(set(wanted) - set(values)))
        with parts.model.scope():  # (a lost ps task is named around the whole loop: training_run)
            results = schedule(count, named)
            try:
                cluster.coordinator.join()
                exhausted = False
            except tf.errors.OutOfRangeError:  # some worker's shard ran out
                exhausted = True
            done = [(_fetched_or_none(result), is_loop) for result, is_loop in results]
        steps, last = 0, None
        for fetched, is_loop in done:
            if fetched is None:
                continue
            if is_loop:
                ran, ran_out, fetched = fetched
                steps, exhausted = steps + int(ran), exhausted or bool(ran_out)
            else:
                steps += 1
            last = fetched
        if last is None:
            return loops.LoopResult(0, True, {})
        return loops.LoopResult(steps, exhausted, {name: tf.constant(value) for name, value in last.items()})

    return run_steps


def _fetched_or_none(result):
    try:
        return result.fetch()
    except tf.errors.OutOfRangeError:
        return None
