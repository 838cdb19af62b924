"""eval_metric_ops' (value, update_op) pairs, TF1's form of a metric, as the spec's streaming metrics.

A TF1 program returned `eval_metric_ops={"accuracy": (value, update_op)}`.
The spec reports a metric that keeps its own state (common.spec.metrics): a
Keras metric, or a ValueAndUpdate, the pair that carries the Keras metric
behind it (what common.tf1.metrics' functions return). A plain pair of
tensors, made otherwise (an F1 computed from two pairs' values), becomes one
(`with_derived`) before the engine sees the spec.
"""

import keras
import tensorflow as tf


class ValueAndUpdate(tuple):
    """(value, update_op), as TF1 metrics returned, that also carries its metric."""

    def __new__(cls, metric, update_op):
        pair = super().__new__(cls, (metric.result(), update_op))
        pair.metric = metric
        return pair


class _LatestValue(keras.metrics.Metric):
    """What a value computed from other pairs' values was after the last update (see derived)."""

    def __init__(self, name, shape):
        super().__init__(name=name)
        self.latest = self.add_variable(shape, "zeros", dtype="float64", name="latest")

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("updated through common.adapters.metric_pairs.derived")

    def result(self):
        return tf.identity(self.latest)


def derived(name, value, update_op):
    """eval_metric_ops' (value, update_op) pair that is not a ValueAndUpdate: a value TF1 programs computed
    from other pairs' values (an F1 from precision and recall, ALBERT's Matthews correlation from the four
    counts), its update_op grouping theirs. Each pair's value here reads its state after its update, so
    `value` is kept after update_op; the last one kept is the value of the whole evaluation."""
    value = tf.convert_to_tensor(value)
    if not (value.dtype.is_floating or value.dtype.is_integer or value.dtype.is_bool) \
            or not value.shape.is_fully_defined():
        raise ValueError(f"eval_metric_ops[{name!r}] is a (value, update_op) pair whose value is a {value.dtype.name} "
                         f"tensor of shape {value.shape}: only numbers of a known shape are reported here (return "
                         "text or a varying shape in predictions, or log it with a hook)")
    metric = _LatestValue(name, value.shape)
    with tf.control_dependencies([] if update_op is None else [update_op]):
        keep = metric.latest.assign(tf.cast(value, tf.float64))
    return ValueAndUpdate(metric, keep)


def with_derived(eval_metric_ops):
    """eval_metric_ops with each plain (tensor, update_op) pair made a derived metric."""
    return {name: derived(name, *metric) if _is_plain_pair(metric) else metric
            for name, metric in eval_metric_ops.items()}


def _is_plain_pair(metric):
    return (isinstance(metric, tuple) and not isinstance(metric, ValueAndUpdate) and len(metric) == 2
            and tf.is_tensor(metric[0]))
