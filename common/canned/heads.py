"""Heads: what a premade estimator (or a model_fn) does with its logits, as tf.estimator 2.15's did.

A head turns logits into the loss (per-example loss, weighted by the
weight column, reduced over the batch), the predictions (the same keys:
logits, logistic, probabilities, class_ids, classes, all_class_ids,
all_classes, predictions), the eval metrics (the same keys and
computations) and the export outputs (classify, regress and predict
signatures under TensorFlow Serving's keys). Only the head differs between
a DNNClassifier and a DNNRegressor.
"""

import tensorflow as tf

from common.canned import head_metrics, optimizers, reductions
from common.canned.reductions import SUM, SUM_OVER_BATCH_SIZE, loss_reduction_of  # noqa: F401 (read as heads')
from common.engine import inputs
from common.spec import metrics
from common.spec.export_outputs import ClassificationOutput, PredictOutput, RegressionOutput
from common.spec.model_fn import EstimatorSpec, ModeKeys, named_arguments
from common.tf1 import summary as tf1_summary

DEFAULT_SERVING_KEY, CLASSIFY_KEY, REGRESS_KEY, PREDICT_KEY = "serving_default", "classification", "regression", \
    "predict"


def checked_loss_fn(loss_fn):
    """loss_fn(labels, logits[, features]) as tf.estimator took it, as f(labels, logits, features), or None."""
    if loss_fn is None:
        return None
    names = set(named_arguments(loss_fn))
    missing = [name for name in ("labels", "logits") if name not in names]
    unknown = sorted(names - {"labels", "logits", "features", "loss_reduction"})
    if missing or unknown:
        raise ValueError(f"loss_fn takes {sorted(names)}; a head calls it with labels=, logits= and, where it "
                         "names it, features= (loss_reduction may be named, and is not given)")
    if "features" in names:
        return lambda labels, logits, features: loss_fn(labels=labels, logits=logits, features=features)
    return lambda labels, logits, features: loss_fn(labels=labels, logits=logits)


def call_loss_fn(loss_fn, labels, logits, features, dimension):
    """A checked_loss_fn's per-example loss, checked to be [batch, dimension] (when tracing where the shapes are
    known, else at run time)."""
    loss = tf.convert_to_tensor(loss_fn(labels, logits, features))
    message = f"loss_fn must return a Tensor of shape [batch, {dimension}] (the per-example loss)"
    expected = logits.shape[:-1].concatenate([dimension])
    if not loss.shape.is_compatible_with(expected):
        raise ValueError(f"{message}; it returned shape {loss.shape} for logits of shape {logits.shape}")
    tf.debugging.assert_equal(tf.shape(loss), tf.concat([tf.shape(logits)[:-1], [dimension]], 0), message=message)
    return tf.cast(loss, tf.float32)


class Head:
    """The loss, predictions, metrics and export outputs of one kind of label.

    loss_fn(labels, logits[, features]), as tf.estimator's heads took it, replaces the per-example
    loss, given the labels as the head's own loss reads them (class ids, float 0/1, multi-hot, targets).
    """

    logits_dimension = 1
    expected_label_dimension = None  # the last dimension labels must have, where the kind of label fixes it
    train_average_loss = False  # also summarize the training loss per example (tf.compat.v1's heads did)
    tf1_scope = ""  # the scope of tf.compat.v1's estimator ("linear/"), under which its head named its losses

    def __init__(self, weight_column=None, loss_reduction=None, name=None, loss_fn=None):
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction_of(loss_reduction)
        self._loss_fn = checked_loss_fn(loss_fn)
        self.name = name

    # What a kind of label defines.
    def predictions(self, logits):
        raise NotImplementedError

    def _unweighted_loss(self, labels, logits):
        """(per-example loss [batch, d], labels as the metrics read them)."""
        raise NotImplementedError

    def _metrics(self, labels, predictions, weights):
        raise NotImplementedError

    def _export_outputs(self, predictions):
        raise NotImplementedError

    # Shared.
    def _weights(self, features):
        """The weight column's values as float [batch, 1], or None."""
        if self._weight_column is None:
            return None
        key = getattr(self._weight_column, "key", self._weight_column)
        if not isinstance(features, dict) or key not in features:
            raise ValueError(f"weight_column {key!r} is not among the features "
                             f"({sorted(features) if isinstance(features, dict) else type(features).__name__})")
        weights = tf.cast(features[key], tf.float32)
        weights = inputs.input_check(weights, tf.reduce_all(weights >= 0.0), f"weight_column {key!r} holds a "
                                     "negative weight; example weights must be >= 0")
        return tf.reshape(weights, [-1, 1])

    def _dense_labels(self, labels, logits):
        if labels is None:
            raise ValueError("labels are None: training and evaluation of a premade estimator need the "
                             "input_fn to give (features, labels)")
        if isinstance(labels, dict):
            raise ValueError(f"labels are a dict ({sorted(labels)}); a premade estimator's head takes one "
                             "label tensor")
        labels = tf.convert_to_tensor(labels)
        if labels.shape.rank == 1 or labels.shape.rank == 0:
            labels = tf.reshape(labels, [-1, 1])
        expected = self.expected_label_dimension
        if expected is not None and labels.shape.rank is not None and labels.shape[-1] not in (None, expected):
            raise ValueError(  # tf.estimator's words, when model_fn is first traced: before any step runs
                f"Mismatched label shape. Expected labels dimension={expected}.  Received {labels.shape[-1]}. "
                "Suggested Fix: If your classifier expects one-hot encoding label, check your n_classes argument "
                "to the estimator and/or the shape of your label. Otherwise, check the shape of your label.")
        return labels

    def _reduce(self, unweighted, weights):
        return reductions.reduced(unweighted, weights, self._loss_reduction)

    def _training_loss(self, labels, logits, features, regularization_losses):
        """(per-example loss, labels as the metrics read them, weights, the reduced and regularized loss)."""
        weights = self._weights(features)
        dense = self._dense_labels(labels, logits)
        unweighted, metric_labels = self._unweighted_loss(dense, logits)
        if self._loss_fn is not None:
            unweighted = call_loss_fn(self._loss_fn, self._loss_fn_labels(metric_labels, dense), logits, features,
                                      unweighted.shape[-1])
        loss = self._reduce(unweighted, weights)
        if regularization_losses:
            loss += tf.add_n(list(regularization_losses))
        return unweighted, metric_labels, weights, loss

    def _loss_fn_labels(self, metric_labels, dense_labels):
        """The labels a loss_fn gets: as the metrics read them (a class head's: overridden)."""
        return metric_labels

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The training loss: weighted per-example loss reduced over the batch, plus regularization."""
        del mode
        return self._training_loss(labels, logits, features, regularization_losses)[-1]

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None, trainable_variables=None,
                              train_op_fn=None, update_ops=None, regularization_losses=None):
        """The EstimatorSpec for `mode`: train_op from train_op_fn(loss), or from `optimizer` (a Keras or TF1
        optimizer) over trainable_variables."""
        predictions = self.predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions, export_outputs=self._export_outputs(predictions))
        unweighted, metric_labels, weights, loss = self._training_loss(labels, logits, features,
                                                                       regularization_losses)
        if mode == ModeKeys.EVAL:
            eval_metrics = {"average_loss": metrics.mean(unweighted, weights)}
            eval_metrics.update(self._metrics(metric_labels, predictions, weights))
            return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=eval_metrics)
        if (optimizer is None) == (train_op_fn is None):
            raise ValueError("create_estimator_spec in TRAIN: give an optimizer or a train_op_fn, one of them")
        if self.train_average_loss:
            examples = tf.cast(tf.shape(unweighted)[0], unweighted.dtype) if weights is None else \
                tf.reduce_sum(weights)
            weighted = unweighted if weights is None else unweighted * weights
            summed = tf.reduce_sum(weighted)
            tf1_summary.scalar("average_loss", summed / examples)
            if self._loss_reduction == SUM:  # (TF1's graph names, which programs' hooks fetched)
                tf.identity(summed, name=f"{self.tf1_scope}head/weighted_loss/Sum")
            else:
                tf.identity(self._reduce(unweighted, weights), name=f"{self.tf1_scope}head/weighted_loss/value")
            tf.identity(summed / examples, name=f"{self.tf1_scope}head/truediv")
        if train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            train_op = optimizers.minimize(optimizer, loss, trainable_variables)
        if update_ops:
            train_op = tf.group(train_op, *update_ops)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def vocabulary_ids(labels, vocabulary):
    """String labels as their int64 index in `vocabulary` (-1 for a string not in it)."""
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(vocabulary), tf.range(len(vocabulary), dtype=tf.int64)), -1)
    return table.lookup(labels)


def checked_below(ids, limit, message):
    """int64 `ids`, checked (when run) to lie in [0, limit)."""
    ids = tf.cast(ids, tf.int64)
    with tf.control_dependencies([tf.debugging.assert_non_negative(ids, message=message),
                                  tf.debugging.assert_less(ids, tf.constant(limit, tf.int64), message=message)]):
        return tf.identity(ids)


def all_class_names(logits, n_classes, vocabulary):
    """Every class's name (the vocabulary's, or its id as a string) for each example: [batch, n_classes]."""
    names = tf.constant([vocabulary]) if vocabulary is not None else \
        tf.strings.as_string(tf.range(n_classes)[tf.newaxis, :])
    return tf.tile(names, [tf.shape(logits)[0], 1])


def _flat(weights):
    return None if weights is None else tf.reshape(weights, [-1])


def _all_class_ids(logits, n_classes):
    return tf.tile(tf.range(n_classes)[tf.newaxis, :], [tf.shape(logits)[0], 1])


class _ClassHead(Head):
    """Shared by the binary and multi-class heads: label vocabulary, classes, class ids, classify outputs."""

    expected_label_dimension = 1  # one class id (or name) an example, not a one-hot row

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None, loss_reduction=None, name=None,
                 loss_fn=None):
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        if label_vocabulary is not None:
            label_vocabulary = list(label_vocabulary)
            if len(label_vocabulary) != n_classes:
                raise ValueError(f"label_vocabulary has {len(label_vocabulary)} entries; it needs n_classes = "
                                 f"{n_classes}")
            if not all(isinstance(v, str) for v in label_vocabulary):
                raise ValueError(f"label_vocabulary must hold strings, got {label_vocabulary!r}")
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary

    def _class_ids_of(self, labels):
        """Labels as class ids (int64 [batch, 1]), checked to lie in [0, n_classes)."""
        if self._label_vocabulary is not None:
            if labels.dtype != tf.string:
                raise ValueError(f"labels are {labels.dtype.name}; with a label_vocabulary they must be strings")
            ids = vocabulary_ids(labels, self._label_vocabulary)
            message = f"Labels must be in label_vocabulary {self._label_vocabulary}"
        else:
            if labels.dtype == tf.string:
                raise ValueError("labels are strings: give the estimator label_vocabulary=[...] to map them to "
                                 "class ids")
            if labels.dtype.is_floating:
                raise ValueError(f"labels are {labels.dtype.name}; class labels must be integers in "
                                 f"[0, {self._n_classes})")
            ids = tf.cast(labels, tf.int64)
            message = f"Labels must be integers in [0, {self._n_classes}) (n_classes={self._n_classes})"
        return checked_below(ids, self._n_classes, message)

    def _classes_of(self, class_ids):
        if self._label_vocabulary is not None:
            return tf.gather(tf.constant(self._label_vocabulary), class_ids)
        return tf.strings.as_string(class_ids)

    def _all_classes(self, logits):
        return all_class_names(logits, self._n_classes, self._label_vocabulary)

    def _class_predictions(self, logits, probabilities):
        class_ids = tf.expand_dims(tf.argmax(logits, axis=-1), -1)
        return {"probabilities": probabilities, "class_ids": class_ids, "classes": self._classes_of(class_ids),
                "all_class_ids": _all_class_ids(logits, self._n_classes), "all_classes": self._all_classes(logits)}

    def _classification_output(self, predictions):
        return ClassificationOutput(scores=predictions["probabilities"], classes=predictions["all_classes"])


class MultiClassHead(_ClassHead):
    """Softmax cross-entropy over n_classes; logits [batch, n_classes]."""

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None, loss_reduction=None, loss_fn=None,
                 name=None):
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2, got {n_classes} (two classes: BinaryClassHead)")
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction, name, loss_fn)
        self.logits_dimension = n_classes

    def predictions(self, logits):
        return {"logits": logits, **self._class_predictions(logits, tf.nn.softmax(logits))}

    def _unweighted_loss(self, labels, logits):
        ids = self._class_ids_of(labels)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ids[:, 0], logits=logits)
        return loss[:, tf.newaxis], ids

    def _loss_fn_labels(self, metric_labels, dense_labels):
        """Class ids in the labels' own integer dtype, as tf.estimator gave them (int64 from a vocabulary)."""
        return tf.cast(metric_labels, dense_labels.dtype) if dense_labels.dtype.is_integer else metric_labels

    def _metrics(self, labels, predictions, weights):
        return {"accuracy": metrics.accuracy(labels, predictions["class_ids"], _flat(weights))}

    def _export_outputs(self, predictions):
        output = self._classification_output(predictions)
        return {DEFAULT_SERVING_KEY: output, CLASSIFY_KEY: output, PREDICT_KEY: PredictOutput(predictions)}


class BinaryClassHead(_ClassHead):
    """Sigmoid cross-entropy; logits [batch, 1]."""

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None, loss_reduction=None,
                 loss_fn=None, name=None):
        super().__init__(2, weight_column, label_vocabulary, loss_reduction, name, loss_fn)
        self._thresholds = head_metrics.checked_thresholds(thresholds)
        self.auc_summation = head_metrics.INTERPOLATION  # tf.compat.v1.estimator's: TRAPEZOIDAL

    def predictions(self, logits):
        logistic = tf.sigmoid(logits)
        probabilities = tf.concat([1 - logistic, logistic], axis=-1)
        return {"logits": logits, "logistic": logistic, **self._class_predictions(
            tf.concat([tf.zeros_like(logits), logits], axis=-1), probabilities)}

    def _unweighted_loss(self, labels, logits):
        ids = tf.cast(self._class_ids_of(labels), tf.float32)
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=ids, logits=logits), ids

    def _metrics(self, labels, predictions, weights):
        flat = _flat(weights)
        class_ids = predictions["class_ids"]
        logistic = predictions["logistic"]
        label_mean = metrics.mean(labels, weights)
        baseline = metrics.Metric(dict(label_mean.totals), lambda t: float(max(
            t["sum"] / t["weight"], 1 - t["sum"] / t["weight"])) if t["weight"] else 0.0)
        return {"accuracy": metrics.accuracy(labels, class_ids, flat),
                "precision": metrics.precision(labels, class_ids, flat),
                "recall": metrics.recall(labels, class_ids, flat),
                "prediction/mean": metrics.mean(logistic, weights),
                "label/mean": label_mean,
                "accuracy_baseline": baseline,
                "auc": head_metrics.auc(labels, logistic, weights, "ROC", self.auc_summation),
                "auc_precision_recall": head_metrics.auc(labels, logistic, weights, "PR", self.auc_summation),
                **head_metrics.threshold_metrics(self._thresholds, labels, logistic, weights)}

    def _export_outputs(self, predictions):
        output = self._classification_output(predictions)
        return {DEFAULT_SERVING_KEY: output, CLASSIFY_KEY: output,
                REGRESS_KEY: RegressionOutput(predictions["logistic"]), PREDICT_KEY: PredictOutput(predictions)}


class RegressionHead(Head):
    """Mean squared error over label_dimension outputs; predictions are the logits (or inverse_link_fn's)."""

    def __init__(self, label_dimension=1, weight_column=None, loss_reduction=None, loss_fn=None,
                 inverse_link_fn=None, name=None):
        if label_dimension < 1:
            raise ValueError(f"label_dimension must be >= 1, got {label_dimension}")
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        self.logits_dimension = label_dimension
        self._inverse_link_fn = inverse_link_fn

    def predictions(self, logits):
        if self._inverse_link_fn is None:
            return {"predictions": logits}
        return {"predictions": self._inverse_link_fn(logits), "logits": logits}

    def _unweighted_loss(self, labels, logits):
        if labels.dtype == tf.string:
            raise ValueError("labels are strings; a regressor's labels must be numbers")
        labels = tf.cast(labels, tf.float32)
        if labels.shape.rank is not None and labels.shape[-1] not in (None, self.logits_dimension):
            raise ValueError(f"labels have shape {labels.shape}; label_dimension is {self.logits_dimension}")
        return tf.square(logits - labels), labels

    def _metrics(self, labels, predictions, weights):
        return {"prediction/mean": metrics.mean(predictions["predictions"], weights),
                "label/mean": metrics.mean(labels, weights)}

    def _export_outputs(self, predictions):
        """As tf.estimator 2.15's regression head, whatever label_dimension is: serving_default and regression
        serve the regress method ([batch, label_dimension] outputs; over a receiver of tf.Examples, else left
        out of the export), predict the predictions."""
        regression = RegressionOutput(predictions["predictions"])
        return {PREDICT_KEY: PredictOutput(predictions), DEFAULT_SERVING_KEY: regression, REGRESS_KEY: regression}


def classification_head(n_classes, weight_column=None, label_vocabulary=None, loss_reduction=None):
    """The head of a premade classifier: binary (logistic) for n_classes=2, else multi-class (softmax)."""
    if n_classes == 2:
        return BinaryClassHead(weight_column, label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)


def regression_head(weight_column=None, label_dimension=1, loss_reduction=None, loss_fn=None, inverse_link_fn=None,
                    name=None):
    """tf.contrib.estimator.regression_head: RegressionHead with contrib's argument order (weight_column first)."""
    return RegressionHead(label_dimension, weight_column, loss_reduction, loss_fn, inverse_link_fn, name)
