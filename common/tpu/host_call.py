"""TPUEstimatorSpec's host_call off a TPU: the function run on the host, after the steps, on its tensors' values.

On a TPU each step sent host_call's tensors out (the outfeed), each shard's
concatenated along the first axis, and TPUEstimator ran the function on the
host with them; off a TPU a session hook ran it every step. Programs (BERT's,
EfficientNet's) write their TF 2 summaries there: a writer of their own
(`create_file_writer(model_dir)`) and `tf.summary.scalar(..., step=gs[0])`.
Called inside model_fn here, that writer would live in the traced step and
never be initialized. So the tensors are named in model_fn's graph, and a
hook fetches their values (the towers' concatenated, as the shards' were)
and calls the function eagerly with them, every `every_n_steps` steps (the
TPUConfig's experimental_host_call_every_n_steps), in training; a writer the
function makes is made once, as in TF1's graph, and closed at the end.
"""

import contextlib

import tensorflow as tf

from common.hooks.protocol import Hook, value_name

NAME = "host_call_{}"  # the name each of host_call's tensors gets in model_fn's graph


class HostCallHook(Hook):
    """Calls host_call's function with its tensors' values after every `every_n_steps`-th step."""

    def __init__(self, fn, keys, names, every_n_steps=1):
        self._fn = fn
        self._keys = keys  # the tensors' keyword names, when host_call gave them as a dict
        self._names = tuple(names)
        self._every = max(int(every_n_steps), 1)
        self._context = None
        self._writers = {}  # (logdir, arguments) -> the summary writer host_call made for them

    def begin(self, context):
        context.check_offered(self._names, "TPUEstimatorSpec host_call")
        self._context = context

    def steps_to_trigger(self, step):
        return self._every - step % self._every

    def before_step(self, step):
        ends_on = step + self._context.steps_coming
        return self._names if ends_on % self._every == 0 else ()

    def after_step(self, step, values, context):
        if any(name not in values for name in self._names):
            return
        tensors = [tf.constant(values[name]) for name in self._names]
        with self._writers_kept():
            self._fn(**dict(zip(self._keys, tensors))) if self._keys else self._fn(*tensors)

    def end(self, step, context):
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    @contextlib.contextmanager
    def _writers_kept(self):
        """While host_call runs, tf.summary.create_file_writer gives the writer it gave for the same arguments
        before: TF1 built the function's writer once, so its events went to one file, not one file a step.
        (TensorFlow's public API has no hook for this: its two module attributes are swapped while it runs.)"""
        modules = (tf.summary, tf.compat.v2.summary)
        originals = [module.create_file_writer for module in modules]

        def kept(logdir, *args, **kwargs):
            key = (str(logdir), args, tuple(sorted(kwargs.items())))
            if key not in self._writers:
                self._writers[key] = originals[0](logdir, *args, **kwargs)
            return self._writers[key]

        for module in modules:
            module.create_file_writer = kept
        try:
            yield
        finally:
            for module, original in zip(modules, originals):
                module.create_file_writer = original


def host_call_hook(host_call, every_n_steps=1):
    """The HostCallHook of a (fn, tensors) pair, its tensors named in the graph model_fn is building."""
    fn, tensors = host_call
    keys = list(tensors) if isinstance(tensors, dict) else None
    values = [tensors[key] for key in keys] if keys else list(tensors)
    names = [value_name(tf.identity(value, name=NAME.format(i))) for i, value in enumerate(values)]
    return HostCallHook(fn, keys, names, every_n_steps)
