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
are recorded the same way (common.adapters.summaries).
"""

import tensorflow as tf

from common.adapters import summaries
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
    summaries.record_scalar(f"{family}/{name}" if family else name, value)
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
