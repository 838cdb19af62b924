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
call built a new graph. The model itself never runs in a session. An
input_fn of placeholders fed by a `FeedFnHook` (TF1 fed each session.run,
which read one batch) has feed_fn called for each batch fetched.
"""

import contextlib
import contextvars
import functools
import weakref

import tensorflow as tf

STOP_GRACE_SECS = 5  # how long the queue-runner threads get to stop when a pass ends
_ESTIMATOR_CALLING = contextvars.ContextVar("common_tf1_estimator_calling_input_fn", default=False)
_PIPELINES = weakref.WeakValueDictionary()  # graph -> the _GraphPipeline built in it, while it lives
_FEED_HOOKS = weakref.WeakSet()  # the FeedFnHooks of the runs going on (a failed run's goes with it)
NOT_AN_INPUT_GRAPH = object()


class GraphNeeded(RuntimeError):
    """An input_fn the upgrade marked (input_fn_in_graph), called eagerly by the Estimator: build it in a graph."""


@contextlib.contextmanager
def estimator_calls():
    """Marks the input_fn calls made inside as the Estimator's (not the program's own)."""
    token = _ESTIMATOR_CALLING.set(True)
    try:
        yield
    finally:
        _ESTIMATOR_CALLING.reset(token)


def called_by_estimator():
    """Whether the input_fn running now was called by the Estimator, not by the program."""
    return _ESTIMATOR_CALLING.get()


def needs_graph(error):
    """Whether input_fn failed only because it ran eagerly (TensorFlow's own errors for graph-only ops)."""
    text = str(error)
    return isinstance(error, GraphNeeded) or isinstance(error, (RuntimeError, ValueError)) and (
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


class _GraphPipeline:
    """input_fn's call built in a TF1 graph of its own: its result's structure and flat tensors, and the
    batches a session gives with the queue runners started (see the module). What a hook runs in the graph
    from after_create_session (an initializable iterator's initializer fed the data's placeholders) runs in
    every session the pipeline makes, after the initializers, as it ran in each TF1 session."""

    def __init__(self, call, what):
        self._at_start = []  # (fetches, feed_dict) hooks ran in this graph
        self._session = None
        self.graph = tf.Graph()
        _PIPELINES[self.graph] = self
        with self.graph.as_default():
            self.structure = as_tuples(call())
            if isinstance(self.structure, tf.data.Dataset):
                raise TypeError(f"{what} needs a TF1 graph and returned a Dataset; return its tensors "
                                "(iterator.get_next()) or build the Dataset without graph-only ops")
            flat = tf.nest.flatten(self.structure, expand_composites=True)
            self._none_at = {i for i, tensor in enumerate(flat) if tensor is None}  # ((features, None), as TF1 took)
            self.tensors = [tensor for tensor in flat if tensor is not None]
            self.specs = _specs(self.tensors, what)
            self._initialize = [tf.compat.v1.global_variables_initializer(),
                                tf.compat.v1.local_variables_initializer(), tf.compat.v1.tables_initializer()]

    def packed(self, values):
        """A batch's values (or tensors) in the structure input_fn returned, its Nones kept."""
        values = iter(values)
        flat = [None if i in self._none_at else next(values) for i in range(len(self._none_at) + len(self.tensors))]
        return tf.nest.pack_sequence_as(self.structure, flat, expand_composites=True)

    def _feed_dict(self):
        """What the running FeedFnHooks' feed_fns feed this batch, keyed by this graph's tensors."""
        fed = {}
        for hook in list(_FEED_HOOKS):
            for key, value in hook.feed_fn().items():
                try:
                    fed[self.graph.as_graph_element(key.name if hasattr(key, "name") else key)] = value
                except (KeyError, ValueError) as error:
                    raise ValueError(f"FeedFnHook: feed_fn fed {key!r}, which is not a tensor of the graph "
                                     f"input_fn was built in ({error})") from error
        return fed

    def run_at_start(self, fetches, feed_dict):
        """Runs fetches in the live session, if any, and in every session made from now on."""
        self._at_start.append((fetches, feed_dict))
        return None if self._session is None else self._session.run(fetches, feed_dict)

    def batches(self):
        session = tf.compat.v1.Session(graph=self.graph)
        coordinator = tf.compat.v1.train.Coordinator()
        threads = []
        try:
            session.run(self._initialize)
            for fetches, feed_dict in self._at_start:
                session.run(fetches, feed_dict)
            self._session = session
            if self.graph.get_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS):  # (placeholders alone have none)
                with self.graph.as_default():  # (start_queue_runners refuses to start while executing eagerly)
                    threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
            while True:
                try:
                    yield tuple(session.run(self.tensors, self._feed_dict()))
                except tf.errors.OutOfRangeError:  # the input's num_epochs read: its end, as in TF1
                    return
        finally:
            self._session = None
            coordinator.request_stop()
            session.close()  # cancels the queue runners' pending enqueues
            coordinator.join(threads, stop_grace_period_secs=STOP_GRACE_SECS, ignore_live_threads=True)


def start_feeding(hook):
    """From now until stop_feeding: hook.feed_fn() feeds each batch fetched (a FeedFnHook's, while its run
    lasts)."""
    _FEED_HOOKS.add(hook)


def stop_feeding(hook):
    _FEED_HOOKS.discard(hook)


def _graph_of(fetches, feed_dict):
    for item in tf.nest.flatten(fetches) + list(feed_dict or {}):
        graph = getattr(item, "graph", None)  # (an eager tensor's .graph raises AttributeError: None)
        if isinstance(graph, tf.Graph):
            return graph
    return None


def run_in_input_graph(fetches, feed_dict=None):
    """A TF1 hook's session.run of ops of an input_fn's graph (`sess.run(iterator.initializer, feed_dict=
    {images: data})` in after_create_session, the way TF1 programs fed numpy data through placeholders):
    run in that graph's sessions (see _GraphPipeline). NOT_AN_INPUT_GRAPH where the fetches are not of one."""
    graph = _graph_of(fetches, feed_dict)
    pipeline = None if graph is None else _PIPELINES.get(graph)
    if pipeline is None:
        return NOT_AN_INPUT_GRAPH
    return pipeline.run_at_start(fetches, feed_dict)


def dataset_in_graph(call, what="input_fn"):
    """The Dataset of the batches `call()` (an input_fn's call) gives when built in a TF1 graph and run
    with its queue runners (see the module)."""
    pipeline = _GraphPipeline(call, what)
    dataset = tf.data.Dataset.from_generator(pipeline.batches, output_signature=pipeline.specs)
    return dataset.map(lambda *flat: pipeline.packed(flat))


def first_batch(call, what="input_fn"):
    """The first batch `call()` gives built in a TF1 graph, as tensors of its values in the structure it
    returned: what a program that calls its queue-runner input_fn itself gets (see input_fn_in_graph)."""
    pipeline = _GraphPipeline(call, what)
    batches = pipeline.batches()
    try:
        values = next(batches, None)
    finally:
        batches.close()
    if values is None:
        raise ValueError(f"{what} gave no batch: its input ended before the first one (no file matched, or "
                         "num_epochs was read)")
    return pipeline.packed([tf.constant(v) for v in values])


def input_fn_in_graph(function):
    """The upgrade's mark on a TF1 function that builds queue-runner input. tf.estimator called it in a graph,
    and TF1 programs also called it themselves, in the graph TF1 always had, to look at a batch
    (`features, target = input_fn(...)`). Called while a graph is being built (by the Estimator, through
    dataset_in_graph) it runs as written; called eagerly by the Estimator it asks for a graph at once (GraphNeeded);
    called eagerly by the program it gives the tensors of its pipeline's first batch (first_batch)."""

    @functools.wraps(function)
    def called(*args, **kwargs):
        if not tf.executing_eagerly():
            return function(*args, **kwargs)
        if called_by_estimator():
            raise GraphNeeded(f"{function.__name__} builds queue-runner input, which needs a TF1 graph")
        return first_batch(lambda: function(*args, **kwargs), function.__name__)

    return called


def placeholder(dtype, shape=None, name=None):
    """tf.compat.v1.placeholder, which the upgrade maps TF1's to: a placeholder where a graph is being built
    (a receiver fn, an input_fn run in a TF1 graph), a tf.TensorSpec when run eagerly (what
    build_raw_serving_input_receiver_fn takes in TF2).

    Args:
      dtype: the placeholder's dtype.
      shape: its shape (None: any).
      name: its name.
    Returns:
      The placeholder tensor, or a tf.TensorSpec.
    Raises:
      GraphNeeded: called eagerly by an input_fn the Estimator calls: the input_fn is then run in a TF1 graph
        of its own, where hooks feed the placeholder (see the module).
    """
    if tf.executing_eagerly():
        if called_by_estimator():
            raise GraphNeeded("input_fn makes a placeholder, which needs a TF1 graph")
        return tf.TensorSpec(shape, dtype, name=name)
    return tf.compat.v1.placeholder(dtype, shape, name)
