"""Summaries written inside model_fn (tf.compat.v1.summary.scalar, tf.summary.scalar).

In a TF1 graph a summary op inside model_fn was collected and written by the
estimator's SummarySaverHook. Here a scalar written in a TRAIN call becomes
one of the spec's scalars (in EVAL and PREDICT calls it is dropped: TF1's
evaluation never ran summary ops, so a program could summarize a metric's
(value, update) pair there): averaged over towers, logged by a hook that asks
for it by name, and written to TensorBoard every save_summary_steps. Other
kinds (histograms, images, text, audio) are TF1's summary ops, whose
serialized protos (tower 0's) the SummarySaverHook writes as TF1's wrote its
merged summary. tf.summary's spellings of those (name, data, step, ...)
are `<kind>_v2`. Outside model_fn, scalar is tf.summary.scalar.
TF 2's own tf.summary.* called in model_fn with no writer of the caller's
are recorded the same way (`tf2_writes_recorded`).
"""

import contextlib
import contextvars
import threading

import tensorflow as tf
from tensorflow.core.framework import summary_pb2
from tensorflow.python.ops import summary_ops_v2

from common.variables import registry


def scalar(name, tensor=None, collections=None, family=None, data=None, step=None, description=None):
    """Takes TF1's (name, tensor, collections, family) and TF2's (name, data, step, description);
    outside model_fn it is tf.summary.scalar."""
    del collections
    value = data if tensor is None else tensor
    if value is None:
        raise ValueError(f"summary.scalar({name!r}): no value given")
    if not registry.running_model_fn():
        return tf.summary.scalar(name, value, step=step, description=description)
    value = tf.convert_to_tensor(value)  # (a training call's must be one number: the model builder checks)
    registry.active_registry().add_summary(f"{family}/{name}" if family else name, tf.cast(value, tf.float32))
    return tf.constant(b"")


def _tf1_kind(kind):
    def summary(name, *args, **kwargs):
        """TF1's summary op; inside model_fn, the run's SummarySaverHook writes it every save_summary_steps,
        as TF1's did."""
        return getattr(tf.compat.v1.summary, kind)(name, *args, **kwargs)
    summary.__name__ = kind
    return summary


histogram = _tf1_kind("histogram")


def histogram_tagged(tag, values):
    """TF1's histogram summary tagged `tag` whatever name scope it is made in (tf.estimator's premade
    estimators tagged their layers' outputs from the root: "dnn/hiddenlayer_0/activation")."""
    summary = tf.raw_ops.HistogramSummary(tag=tag, values=values, name=tag.rsplit("/", 1)[-1])
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SUMMARIES, summary)
    return summary
image = _tf1_kind("image")
text = _tf1_kind("text")
audio = _tf1_kind("audio")


def _tf2_spelling(kind, tf1_arguments):
    def summary(name, data, step=None, *args, **kwargs):
        """tf.summary's spelling (name, data, step, ...): inside model_fn, TF1's op of that kind, written by the
        run's SummarySaverHook at its steps (`step` is its step); outside, tf.summary's (which needs the
        tensorboard package)."""
        if not registry.running_model_fn():
            return getattr(tf.summary, kind)(name, data, step, *args, **kwargs)
        options = dict(zip(tf1_arguments, args), **kwargs)
        return getattr(tf.compat.v1.summary, kind)(name, data, **{k: v for k, v in options.items()
                                                                   if k in tf1_arguments})
    summary.__name__ = f"{kind}_v2"
    return summary


histogram_v2 = _tf2_spelling("histogram", ())  # (buckets, description: TF1's op has neither)
image_v2 = _tf2_spelling("image", ("max_outputs",))
text_v2 = _tf2_spelling("text", ())
audio_v2 = _tf2_spelling("audio", ("sample_rate", "max_outputs"))



_TF2_WRITE = tf.summary.write  # what every TF 2 summary (tensorboard's scalar, histogram, image, ...) ends in
_SUMMARY_MODULES = (tf.summary, tf.compat.v2.summary)
_MODEL_FN_SCOPE = contextvars.ContextVar("model_fn_name_scope", default=None)  # set while model_fn is called
_SWAP_LOCK = threading.Lock()
_swapped_for = {"calls": 0}  # how many model_fn calls, of any thread, have tf.summary.write swapped now


def _write_in_model_fn(tag, tensor, step=None, metadata=None, name=None):
    """tf.summary.write in a model_fn with no default writer: a number is one of the spec's scalars (tagged
    without the tower's name scope, as common's scalar); any other summary is TF1's tensor summary op (its
    plugin metadata kept: a histogram's buckets, an image's PNGs), which the SummarySaverHook writes. `step`
    is the global step it is written at."""
    scope = _MODEL_FN_SCOPE.get()
    if scope is None or summary_ops_v2.has_default_writer():
        return _TF2_WRITE(tag, tensor, step, metadata, name)
    value = tf.convert_to_tensor(tensor() if callable(tensor) else tensor)
    if isinstance(metadata, bytes):
        metadata = summary_pb2.SummaryMetadata.FromString(metadata)
    plugin = metadata.plugin_data.plugin_name if metadata is not None else ""
    if plugin == "scalars" and value.shape.rank == 0:
        scalar(tag[len(scope) + 1:] if scope and tag.startswith(scope + "/") else tag, value)
    else:
        serialized = metadata.SerializeToString() if metadata is not None else b""
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SUMMARIES, tf.raw_ops.TensorSummaryV2(
            tag=tag, tensor=value, serialized_summary_metadata=serialized, name=name))
    return tf.constant(True)


@contextlib.contextmanager
def tf2_writes_recorded():
    """While model_fn is called, TF 2's tf.summary.scalar / histogram / image / text with no default writer are
    written every save_summary_steps as TF1's ops were, where tf.estimator 2.15 wrote nothing and said nothing.
    (TensorFlow offers no hook: tf.summary.write's two module attributes are swapped while any model_fn runs;
    the swapped function leaves calls outside model_fn, and those under the caller's own writer, to TF's.)"""
    token = _MODEL_FN_SCOPE.set(tf.compat.v1.get_default_graph().get_name_scope())
    with _SWAP_LOCK:
        _swapped_for["calls"] += 1
        for module in _SUMMARY_MODULES:
            module.write = _write_in_model_fn
    try:
        yield
    finally:
        _MODEL_FN_SCOPE.reset(token)
        with _SWAP_LOCK:
            _swapped_for["calls"] -= 1
            if not _swapped_for["calls"]:
                for module in _SUMMARY_MODULES:
                    module.write = _TF2_WRITE
