"""Summaries written inside model_fn, as the spec's named parts: scalars, and the summary ops the hooks write.

In a TF1 graph, a summary op made in model_fn was collected and written by
the estimator's SummarySaverHook; tf.estimator 2.15 wrote nothing, and said
nothing, for TF 2's tf.summary.* called there. Here a scalar written in a
TRAIN call becomes one of the spec's scalars (averaged over towers, logged
by a hook that asks for it by name, written every save_summary_steps); other
kinds are TF1's summary ops, whose protos the SummarySaverHook writes.
`record_scalar` is how a call records one (common.tf1.summary's scalar);
`tf2_writes_recorded` makes TF 2's own tf.summary.* record theirs.
"""

import contextlib
import contextvars

import tensorflow as tf

from common.internals import tensorflow_internals
from common.internals.scoped_patches import ScopedPatch, all_active
from common.variables import registry

_TF2_WRITE = tf.summary.write  # what every TF 2 summary (tensorboard's scalar, histogram, image, ...) ends in
_MODEL_FN_SCOPE = contextvars.ContextVar("model_fn_name_scope", default=None)  # set while model_fn is called


def record_scalar(name, value):
    """Records `value` (a number) as the spec's scalar `name` in the model_fn call running now (a training
    call's must be one number: checked when the call ends, see scalars_of_call)."""
    registry.active_registry().add_summary(name, tf.cast(tf.convert_to_tensor(value), tf.float32))


def _write_in_model_fn(tag, tensor, step=None, metadata=None, name=None):
    """tf.summary.write in a model_fn with no default writer: a number is one of the spec's scalars (tagged
    without the tower's name scope, as common's scalar); any other summary is TF1's tensor summary op (its
    plugin metadata kept: a histogram's buckets, an image's PNGs), which the SummarySaverHook writes. `step`
    is the global step it is written at."""
    scope = _MODEL_FN_SCOPE.get()
    if scope is None or tensorflow_internals.has_default_writer():
        return _TF2_WRITE(tag, tensor, step, metadata, name)
    value = tf.convert_to_tensor(tensor() if callable(tensor) else tensor)
    if isinstance(metadata, bytes):
        metadata = tf.compat.v1.SummaryMetadata.FromString(metadata)
    plugin = metadata.plugin_data.plugin_name if metadata is not None else ""
    if plugin == "scalars" and value.shape.rank == 0:
        record_scalar(tag[len(scope) + 1:] if scope and tag.startswith(scope + "/") else tag, value)
    else:
        serialized = metadata.SerializeToString() if metadata is not None else b""
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SUMMARIES, tf.raw_ops.TensorSummaryV2(
            tag=tag, tensor=value, serialized_summary_metadata=serialized, name=name))
    return tf.constant(True)


# TensorFlow offers no hook for its summaries: tf.summary.write is replaced (in both modules that name it)
# while a model_fn runs, and the replacement leaves calls outside model_fn, and those under the caller's own
# writer, to TensorFlow's.
_WRITE_PATCHES = [ScopedPatch(module, "write", _write_in_model_fn)
                  for module in {id(m): m for m in (tf.summary, tf.compat.v2.summary)}.values()]


@contextlib.contextmanager
def tf2_writes_recorded():
    """While model_fn is called: TF 2's tf.summary.scalar / histogram / image / text with no default writer are
    recorded as TF1's summary ops were (see the module)."""
    token = _MODEL_FN_SCOPE.set(tf.compat.v1.get_default_graph().get_name_scope())
    try:
        with all_active(_WRITE_PATCHES):
            yield
    finally:
        _MODEL_FN_SCOPE.reset(token)


def scalars_of_call(record):
    """The scalars a training call of model_fn wrote (record: its CallRecord), checked to be numbers."""
    for name, value in record.scalars.items():
        if value.shape.rank not in (0, None):
            raise ValueError(f"summary.scalar({name!r}) got a tensor of shape {value.shape}; a scalar "
                             "summary takes one number")
    return dict(record.scalars)
