"""input_fns that need a TF1 graph: queue runners and the other graph-only ops, run as tf.estimator ran them.

tf.estimator called input_fn inside its graph and ran the queue runners that
input_fn started (`tf.train.string_input_producer` + a `TFRecordReader` +
`tf.train.batch`, the standard TF1 pipeline until 2017; `slice_input_producer`,
`shuffle_batch`, `parallel_stack`). Those ops refuse eager execution. Such an
input_fn is called here in a graph of its own, and its tensors are fetched by
a session with the queue runners started, one batch per fetch, until the
pipeline says it has ended (OutOfRangeError: `num_epochs` read); the batches
become the Dataset the Estimator reads. Each pass over the Dataset (each
train() or evaluate() call) builds the pipeline again, as each tf.estimator
call built a new graph. The model itself never runs in a session.
"""

import tensorflow as tf

STOP_GRACE_SECS = 5  # how long the queue-runner threads get to stop when a pass ends


def needs_graph(error):
    """Whether input_fn failed only because it ran eagerly (TensorFlow's own errors for graph-only ops)."""
    text = str(error)
    return isinstance(error, (RuntimeError, ValueError)) and (
        "eager execution" in text or "Queues are not supported" in text)


def as_tuples(result):
    """input_fn's result with its lists as tuples: a (features, labels) list read as the pair tf.estimator read,
    and per-tower lists of tensors (the official CIFAR-10 example's) kept apart, where tf.data would stack a
    list into one tensor."""
    if isinstance(result, (list, tuple)) and not hasattr(result, "_fields"):
        return tuple(as_tuples(item) for item in result)
    if isinstance(result, dict):
        return {key: as_tuples(value) for key, value in result.items()}
    return result


def _specs(tensors, what):
    specs = []
    for tensor in tensors:
        if not isinstance(tensor, tf.Tensor):
            raise TypeError(f"{what} built in a graph returned a {type(tensor).__name__}; the Estimator reads "
                            "tensors (dense or sparse) from such an input_fn")
        specs.append(tf.TensorSpec(tensor.shape, tensor.dtype))
    return tuple(specs)


def dataset_in_graph(call, what="input_fn"):
    """The Dataset of the batches `call()` (an input_fn's call) gives when built in a TF1 graph and run
    with its queue runners (see the module)."""
    graph = tf.Graph()
    with graph.as_default():
        structure = as_tuples(call())
        if isinstance(structure, tf.data.Dataset):
            raise TypeError(f"{what} needs a TF1 graph and returned a Dataset; return its tensors "
                            "(iterator.get_next()) or build the Dataset without graph-only ops")
        tensors = tf.nest.flatten(structure, expand_composites=True)
        specs = _specs(tensors, what)
        initialize = [tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
                      tf.compat.v1.tables_initializer()]

    def batches():
        session = tf.compat.v1.Session(graph=graph)
        coordinator = tf.compat.v1.train.Coordinator()
        threads = []
        try:
            session.run(initialize)
            with graph.as_default():  # (start_queue_runners refuses to start while executing eagerly)
                threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
            while True:
                try:
                    yield tuple(session.run(tensors))
                except tf.errors.OutOfRangeError:  # the input's num_epochs read: its end, as in TF1
                    return
        finally:
            coordinator.request_stop()
            session.close()  # cancels the queue runners' pending enqueues
            coordinator.join(threads, stop_grace_period_secs=STOP_GRACE_SECS, ignore_live_threads=True)

    dataset = tf.data.Dataset.from_generator(batches, output_signature=specs)
    return dataset.map(lambda *flat: tf.nest.pack_sequence_as(structure, list(flat), expand_composites=True))
