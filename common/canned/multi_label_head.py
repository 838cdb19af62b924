"""MultiLabelHead: n independent yes/no labels per example, as tf.estimator 2.15's head computed them.

Each class gets a sigmoid; the per-example loss is the sigmoid
cross-entropy averaged over the classes, weighted and reduced over the
batch as the other heads do. Labels come as a multi-hot tensor [batch,
n_classes], or as a SparseTensor of class ids (or of class names, with
label_vocabulary). Its eval metrics are tf.estimator's: average_loss, auc,
auc_precision_recall, accuracy / precision / recall at each of
`thresholds`, and probability_mean / auc / auc_precision_recall of each
class in classes_for_class_based_metrics.
"""

import tensorflow as tf

from common.canned import head_metrics, heads
from common.spec import metrics
from common.spec.export_outputs import ClassificationOutput, PredictOutput


class MultiLabelHead(heads.Head):
    """Sigmoid cross-entropy per class; logits [batch, n_classes]."""

    def __init__(self, n_classes, weight_column=None, thresholds=None, label_vocabulary=None, loss_reduction=None,
                 loss_fn=None, classes_for_class_based_metrics=None, name=None):
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification, got {n_classes}")
        self._thresholds = head_metrics.checked_thresholds(thresholds)
        if label_vocabulary is not None and len(label_vocabulary) != n_classes:
            raise ValueError(f"label_vocabulary has {len(label_vocabulary)} entries; it needs n_classes = "
                             f"{n_classes}")
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        self.logits_dimension = n_classes
        self._n_classes = n_classes
        self._label_vocabulary = list(label_vocabulary) if label_vocabulary is not None else None
        self._class_metrics = [self._class_id(c) for c in classes_for_class_based_metrics or ()]

    def _class_id(self, class_):
        if isinstance(class_, str):
            if not self._label_vocabulary or class_ not in self._label_vocabulary:
                raise ValueError(f"classes_for_class_based_metrics names {class_!r}, which is not in "
                                 f"label_vocabulary {self._label_vocabulary}")
            return self._label_vocabulary.index(class_)
        if not 0 <= class_ < self._n_classes:
            raise ValueError(f"classes_for_class_based_metrics must be in [0, {self._n_classes - 1}], got {class_}")
        return class_

    def _dense_labels(self, labels, logits):
        """Labels as multi-hot int64 [batch, n_classes], checked."""
        if labels is None:
            raise ValueError("labels are None: training and evaluation with a head need the input_fn to give "
                             "(features, labels)")
        if isinstance(labels, tf.SparseTensor):
            values = labels.values
            if values.dtype == tf.string:
                if self._label_vocabulary is None:
                    raise ValueError("labels are strings: give the head label_vocabulary=[...]")
                values = heads.vocabulary_ids(values, self._label_vocabulary)
            values = heads.checked_below(values, self._n_classes, f"labels must be class ids in [0, {self._n_classes})")
            ids = tf.SparseTensor(labels.indices, values, labels.dense_shape)
            return tf.cast(tf.sparse.to_indicator(ids, self._n_classes), tf.int64)
        labels = tf.convert_to_tensor(labels)
        if labels.dtype == tf.string or labels.dtype.is_floating:
            raise ValueError(f"labels are {labels.dtype.name}; a multi-label head takes a multi-hot integer "
                             "tensor [batch, n_classes] or a SparseTensor of class ids")
        if labels.shape.rank is not None and labels.shape[-1] not in (None, self._n_classes):
            raise ValueError(f"labels have shape {labels.shape}; a multi-hot label needs its last dimension to be "
                             f"n_classes = {self._n_classes}")
        return heads.checked_below(labels, 2, "labels must be an integer indicator Tensor with values in [0, 1]")

    def predictions(self, logits):
        return {"logits": logits, "probabilities": tf.sigmoid(logits),
                "classes": heads.all_class_names(logits, self._n_classes, self._label_vocabulary)}

    def _unweighted_loss(self, labels, logits):
        per_class = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(labels, logits.dtype), logits=logits)
        return tf.reduce_mean(per_class, axis=-1, keepdims=True), labels

    def _metrics(self, labels, predictions, weights):
        probabilities = predictions["probabilities"]
        found = {"auc": head_metrics.auc(labels, probabilities, weights, "ROC"),
                 "auc_precision_recall": head_metrics.auc(labels, probabilities, weights, "PR")}
        found.update(head_metrics.threshold_metrics(self._thresholds, labels, probabilities, weights))
        for class_id in self._class_metrics:
            suffix = f"class{class_id}" if self._label_vocabulary is None else self._label_vocabulary[class_id]
            class_probabilities = probabilities[:, class_id:class_id + 1]
            class_labels = labels[:, class_id:class_id + 1]
            found[f"probability_mean/{suffix}"] = metrics.mean(class_probabilities, weights)
            found[f"auc/{suffix}"] = head_metrics.auc(class_labels, class_probabilities, weights, "ROC")
            found[f"auc_precision_recall/{suffix}"] = head_metrics.auc(class_labels, class_probabilities, weights, "PR")
        return found

    def _export_outputs(self, predictions):
        output = ClassificationOutput(scores=predictions["probabilities"], classes=predictions["classes"])
        return {heads.DEFAULT_SERVING_KEY: output, heads.CLASSIFY_KEY: output,
                heads.PREDICT_KEY: PredictOutput(predictions)}

