"""The reference cases' data, columns and estimators, for either side: the project's tests
(reference.py) and the recorder run with tf.estimator 2.15 (record_tf215_reference.py). It imports
only numpy and TensorFlow; a Flavour names the side's estimators."""

import dataclasses
import os
from typing import Callable

import numpy as np
import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Flavour:
    """One side's makers: tf.estimator's and tf.compat.v1.estimator's premade estimators and heads (or
    common.canned's and common.canned.v1's), Adam(learning_rate) (Keras 2's legacy one in TF 2.15, which the
    upgrade turns into Keras 3's) and TF1's shared_embedding_columns (built where that side can)."""

    canned: object
    canned_v1: object
    adam: Callable
    shared_embedding_columns: Callable


A = np.array([0.5, -1.0, 1.5, 2.0, -0.5, 0.0, 1.0, -2.0], np.float32)
FEATURES = {"a": A, "b": np.array([1.0, 0.0, -1.0, 2.0, 0.5, -1.5, 0.3, 1.2], np.float32),
            "c": np.array(["x", "y", "z", "x", "y", "z", "x", "w"]),
            "w": np.array([1.0, 2.0, 1.0, 1.0, 0.5, 1.0, 2.0, 1.0], np.float32)}
LABELS3 = np.array([0, 1, 2, 1, 0, 2, 1, 0])
LABELS2 = np.array([0, 1, 1, 0, 1, 0, 1, 1])
LABELS_MULTI = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]])
TARGETS = np.array([1.0, -0.5, 2.0, 0.3, 0.0, 1.5, -1.0, 0.7], np.float32)


def columns():
    return (tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b"),
            tf.feature_column.categorical_column_with_vocabulary_list("c", ["x", "y", "z"]))


ALL_FEATURES = dict(FEATURES, h=np.array(["p", "q", "r", "s", "p", "t", "u", "q"]),
                    i=np.array([0, 1, 3, 2, 1, 0, 3, 2]), k=np.array([0, 2, 1, 1, 2, 0, 1, 2]),
                    s=np.array(["m", "n", "m", "o", "n", "o", "m", "n"]),
                    kw=np.array([1.0, 0.5, 2.0, 1.0, 1.5, 1.0, 0.5, 2.0], np.float32))


def all_kinds_of_columns():
    """(linear, dnn) columns of every kind: vocabulary file, hash, identity, crossed, weighted, bucketized;
    numeric, indicator, embedding of a weighted column."""
    fc = tf.feature_column
    a, b, _ = columns()
    by_file = fc.categorical_column_with_vocabulary_file("c", os.path.join(os.path.dirname(__file__),
                                                                          "vocabulary.txt"))
    identity = fc.categorical_column_with_identity("i", 4)
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("k", 3), "kw")
    linear = [fc.categorical_column_with_hash_bucket("h", 5), identity, fc.crossed_column(["h", by_file], 7),
              weighted, by_file, fc.bucketized_column(a, [0.0, 1.0])]
    return linear, [a, b, fc.indicator_column(identity), fc.embedding_column(weighted, 2)]


def all_kinds_and_shared_embeddings(shared_embedding_columns):
    """all_kinds_of_columns, the DNN's with two shared embedding columns (TF1's, as TF1 programs had them)."""
    linear, dnn = all_kinds_of_columns()
    shared = shared_embedding_columns(
        [tf.feature_column.categorical_column_with_hash_bucket(key, 4) for key in ("s", "h")], 2)
    return linear, dnn + list(shared)


def tpu_embedding_columns():
    """DNN columns with TPU embeddings (one embedding, two shared), as TPU recommenders built them; off a TPU,
    TensorFlow's TPU columns are their parents."""
    fc, tpu = tf.feature_column, tf.compat.v1.tpu.experimental
    a, b, c = columns()
    shared = tpu.shared_embedding_columns([fc.categorical_column_with_identity(key, 4) for key in ("i", "k")], 2)
    return [a, b, tpu.embedding_column(c, 2)] + list(shared)


def binary_loss(labels, logits, features):
    """A head's loss_fn of the reference cases: weighted by |a| (features reach it)."""
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits) * (
        1.0 + tf.abs(tf.reshape(features["a"], [-1, 1])))


def doubled_softmax_loss(labels, logits):
    return 2.0 * tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(labels, [-1]),
                                                                logits=logits)[:, tf.newaxis]


def absolute_error(labels, logits):
    return tf.abs(logits - labels)


def estimator(case, flavour, **kwargs):
    """(estimator, features, labels) of a reference case, made with `flavour`'s estimators."""
    a, b, c = columns()
    canned, v1 = flavour.canned, flavour.canned_v1

    def wide_and_deep(columns):
        return dict(linear_feature_columns=columns[0], dnn_feature_columns=columns[1], dnn_hidden_units=[3],
                    **kwargs)

    makers = {
        "dnn3": lambda: (canned.DNNClassifier([3], [a, b], n_classes=3, **kwargs), LABELS3),
        "dnn2w": lambda: (canned.DNNClassifier([3], [a, b], weight_column="w", **kwargs), LABELS2),
        "dnnreg": lambda: (canned.DNNRegressor([3], [a, b], **kwargs), TARGETS),
        "lin3": lambda: (canned.LinearClassifier([a, b, c], n_classes=3, **kwargs), LABELS3),
        "lin2": lambda: (canned.LinearClassifier([a, b, c], **kwargs), LABELS2),
        "linreg": lambda: (canned.LinearRegressor([a, b, c], **kwargs), TARGETS),
        "wd2": lambda: (canned.DNNLinearCombinedClassifier(linear_feature_columns=[c], dnn_feature_columns=[a, b],
                                                           dnn_hidden_units=[3], **kwargs), LABELS2),
        "wdreg": lambda: (canned.DNNLinearCombinedRegressor(linear_feature_columns=[c], dnn_feature_columns=[a, b],
                                                            dnn_hidden_units=[3], weight_column="w", **kwargs),
                          TARGETS),
        "base3_single": lambda: (canned.BaselineClassifier(n_classes=3, **kwargs), LABELS3),
        "basereg_single": lambda: (canned.BaselineRegressor(**kwargs), TARGETS),
        "dnnml": lambda: (canned.DNNEstimator(canned.MultiLabelHead(3, weight_column="w", thresholds=[0.3],
                                                                    classes_for_class_based_metrics=[1]),
                                              [3], [a, b], **kwargs), LABELS_MULTI),
        "dnnbt": lambda: (canned.DNNEstimator(canned.BinaryClassHead(weight_column="w", thresholds=[0.3, 0.7]),
                                              [3], [a, b], **kwargs), LABELS2),
        "dnnbloss": lambda: (canned.DNNEstimator(canned.BinaryClassHead(weight_column="w", loss_fn=binary_loss),
                                                 [3], [a, b], **kwargs), LABELS2),
        "dnn3loss": lambda: (canned.DNNEstimator(canned.MultiClassHead(3, loss_fn=doubled_softmax_loss), [3], [a, b],
                                                 **kwargs), LABELS3),
        "linregloss": lambda: (canned.LinearEstimator(canned.RegressionHead(loss_fn=absolute_error), [a, b, c],
                                                      **kwargs), TARGETS),
        "dnn3legacyadam": lambda: (canned.DNNClassifier([3], [a, b], n_classes=3,
                                                        optimizer=flavour.adam(0.05), **kwargs), LABELS3),
        "lin2legacycall": lambda: (canned.LinearClassifier([a, b, c], optimizer=lambda: flavour.adam(0.05),
                                                           **kwargs), LABELS2),
        "wdall": lambda: (canned.DNNLinearCombinedClassifier(**wide_and_deep(all_kinds_of_columns())), LABELS2),
        "wdall_v1": lambda: (v1.DNNLinearCombinedClassifier(**wide_and_deep(all_kinds_and_shared_embeddings(
                                 flavour.shared_embedding_columns))),
                             LABELS2),
        "dnn3tpu": lambda: (canned.DNNClassifier([3], tpu_embedding_columns(), n_classes=3, **kwargs), LABELS3),
        "dnn3vocab": lambda: (canned.DNNClassifier([3], [a, b], n_classes=3, label_vocabulary=["p", "q", "r"],
                                                   **kwargs), np.array(["p", "q", "r"])[LABELS3]),
    }
    made, labels = makers[case]()
    features = {"a": A} if case.startswith("base") else \
        ALL_FEATURES if case.startswith(("wdall", "dnn3tpu")) else FEATURES
    return made, features, labels
