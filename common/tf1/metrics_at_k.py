"""tf.compat.v1.metrics' ranking family inside model_fn: precision, recall and average precision at k.

Recommenders and retrieval models scored their top-k class ids against
each example's label ids with these. Each is TF1's arithmetic over sets:
labels are class ids ([batch] or [batch, num_labels], dense or a
SparseTensor; a [batch] one is a single id per example), the top k of
`predictions` (or `predictions_idx` given) the retrieved ids; per example,
true positives are the ids in both, false positives the retrieved ids not in
the labels, false negatives the label ids not retrieved. With class_id, only
that id counts. Precision is tp / (tp + fp) and recall tp / (tp + fn) over
everything seen (NaN where nothing counted, as TF1's), weighted per example;
average precision at k is the mean over examples of sum_i P(i) rel(i) /
min(k, number of label ids) (TF1's formula). The pairs stream as
common.tf1.metrics' do.
"""

import tensorflow as tf

from common.adapters.metric_pairs import ValueAndUpdate
from common.tf1.metrics import WeightedRatio, weights_like


def _ids(values, name):
    """Class ids as int64, a SparseTensor kept sparse."""
    if isinstance(values, tf.SparseTensor):
        return tf.SparseTensor(values.indices, tf.cast(values.values, tf.int64), values.dense_shape)
    return tf.cast(tf.convert_to_tensor(values, name=name), tf.int64)


def _expanded(labels, predictions_idx):
    """Labels with one id per example given as [batch] get their [batch, 1] form, as TF1's
    _maybe_expand_labels."""
    rank = labels.shape.rank
    if rank is not None and predictions_idx.shape.rank is not None and rank == predictions_idx.shape.rank - 1:
        if isinstance(labels, tf.SparseTensor):
            return tf.sparse.expand_dims(labels, -1)
        return tf.expand_dims(labels, -1)
    return labels


def _as_sparse(ids):
    """ids as a SparseTensor holding every id (a dense id 0 included)."""
    if isinstance(ids, tf.SparseTensor):
        return ids
    indices = tf.where(tf.ones_like(ids, tf.bool))
    return tf.SparseTensor(indices, tf.gather_nd(ids, indices), tf.shape(ids, out_type=tf.int64))


def _counts(labels, predictions_idx, class_id):
    """(tp, fp, fn) per example, float64."""
    labels, retrieved = _as_sparse(labels), _as_sparse(predictions_idx)
    if class_id is not None:
        labels = tf.sparse.retain(labels, tf.equal(labels.values, class_id))
        retrieved = tf.sparse.retain(retrieved, tf.equal(retrieved.values, class_id))

    def size(ids):
        return tf.cast(tf.sets.size(ids), tf.float64)
    return (size(tf.sets.intersection(retrieved, labels)), size(tf.sets.difference(retrieved, labels)),
            size(tf.sets.difference(retrieved, labels, aminusb=False)))


def _top_k(predictions, k):
    return tf.cast(tf.math.top_k(tf.convert_to_tensor(predictions, name="predictions"), k).indices, tf.int64)


def _precision_or_recall(kind, labels, predictions_idx, class_id, weights, name):
    predictions_idx = _ids(predictions_idx, "predictions_idx")
    labels = _expanded(_ids(labels, "labels"), predictions_idx)
    tp, fp, fn = _counts(labels, predictions_idx, class_id)
    w = weights_like(weights, tp)
    missed = fp if kind == "precision" else fn
    metric = WeightedRatio(name, divide=tf.math.divide)  # (0 / 0 is NaN, as TF1's)
    return ValueAndUpdate(metric, metric.add(tp * w, (tp + missed) * w))


def _default_name(kind, k, class_id):
    return f"{kind}_at_{k}" + ("" if class_id is None else f"_class{class_id}")


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """tf.compat.v1.metrics.precision_at_top_k: precision of the retrieved ids `predictions_idx` ([batch, k]).

    Args:
      labels: class ids, [batch] or [batch, num_labels], dense or sparse.
      predictions_idx: the retrieved class ids, [batch, k].
      k: its last dimension, if given (only names the metric here).
      class_id: count only this id.
      weights: per example ([batch]) or None.
      metrics_collections, updates_collections: TF1's graph collections (not used here).
      name: the metric's name.

    Returns:
      (value, update_op).
    """
    k = k or predictions_idx.shape[-1]
    return _precision_or_recall("precision", labels, predictions_idx, class_id, weights,
                                name or _default_name("precision", k, class_id))


def precision_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """tf.compat.v1.metrics.precision_at_k: precision_at_top_k of the top `k` of `predictions` ([batch, classes]
    scores); the other arguments as there."""
    return precision_at_top_k(labels, _top_k(predictions, k), k, class_id, weights,
                              name=name or _default_name("precision", k, class_id))


sparse_precision_at_k = precision_at_k


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """tf.compat.v1.metrics.recall_at_top_k: recall of the retrieved ids `predictions_idx` ([batch, k]); the
    arguments as precision_at_top_k's."""
    k = k or predictions_idx.shape[-1]
    return _precision_or_recall("recall", labels, predictions_idx, class_id, weights,
                                name or _default_name("recall", k, class_id))


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """tf.compat.v1.metrics.recall_at_k: recall_at_top_k of the top `k` of `predictions`."""
    return recall_at_top_k(labels, _top_k(predictions, k), k, class_id, weights,
                           name=name or _default_name("recall", k, class_id))


def _average_precision(labels, predictions_idx):
    """TF1's per-example average precision of the retrieved ids against the label ids."""
    k = predictions_idx.shape[-1]
    labels_per_k = _as_sparse(labels)
    relevant = []
    for position in range(k):  # (rel(i): whether the i-th retrieved id is a label id)
        tp, _, _ = _counts(labels_per_k, predictions_idx[..., position:position + 1], None)
        relevant.append(tp)
    relevant = tf.stack(relevant, axis=-1)
    precision_per_k = tf.math.cumsum(relevant, axis=-1) / tf.range(1, k + 1, dtype=tf.float64)
    if isinstance(labels, tf.SparseTensor):
        num_relevant = tf.minimum(tf.cast(tf.sets.size(labels), tf.float64), k)
    else:  # (dense: the labels' last dimension, as TF1's _num_relevant)
        num_relevant = tf.fill(tf.shape(labels)[:-1], tf.cast(tf.minimum(tf.shape(labels)[-1], k), tf.float64))
    return tf.math.divide(tf.reduce_sum(precision_per_k * relevant, axis=-1), num_relevant)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """tf.compat.v1.metrics.average_precision_at_k: the (weighted) mean over examples of the average precision
    of the top `k` of `predictions` ([batch, classes] scores) against `labels` (as precision_at_top_k's).

    Raises:
      ValueError: k below 1.
    """
    if k < 1:
        raise ValueError(f"average_precision_at_k: k={k} must be at least 1")
    predictions_idx = _top_k(predictions, k)
    labels = _expanded(_ids(labels, "labels"), predictions_idx)
    precision = _average_precision(labels, predictions_idx)
    w = weights_like(weights, precision)
    metric = WeightedRatio(name or f"average_precision_at_{k}")
    return ValueAndUpdate(metric, metric.add(precision * w, w))


sparse_average_precision_at_k = average_precision_at_k
