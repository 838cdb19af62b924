"""The multi-label head on its own: its loss from multi-hot, sparse-id and sparse-name labels alike, its
predictions and exports under tf.estimator's keys, bad labels named. (Its numbers against TF 2.15 are the
"dnnml" case of test_estimators.)"""

import numpy as np
import pytest
import tensorflow as tf

from common import canned
from common.spec.model_fn import ModeKeys

LOGITS = tf.constant([[1.0, -2.0, 0.5], [0.0, 1.0, -3.0]])
MULTI_HOT = tf.constant([[1, 0, 1], [0, 1, 0]])


def _expected_loss(weights=(1.0, 1.0)):
    per_class = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(MULTI_HOT, tf.float32), logits=LOGITS)
    per_example = per_class.numpy().mean(axis=1)
    return float(np.dot(per_example, weights) / 2)


def test_the_loss_is_the_class_mean_of_sigmoid_cross_entropy_whatever_the_label_form():
    head = canned.MultiLabelHead(3)
    assert float(head.loss(MULTI_HOT, LOGITS)) == pytest.approx(_expected_loss())
    ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0]], values=tf.constant([0, 2, 1], tf.int64),
                          dense_shape=[2, 2])
    assert float(head.loss(ids, LOGITS)) == pytest.approx(_expected_loss())
    named = canned.MultiLabelHead(3, label_vocabulary=["a", "b", "c"], weight_column="w")
    names = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0]], values=tf.constant(["a", "c", "b"]), dense_shape=[2, 2])
    assert float(named.loss(names, LOGITS, {"w": tf.constant([2.0, 0.5])})) == pytest.approx(_expected_loss((2, 0.5)))


def test_predictions_and_exports_carry_tf_estimators_keys():
    spec = canned.MultiLabelHead(3, label_vocabulary=["a", "b", "c"]).create_estimator_spec(
        {}, ModeKeys.PREDICT, LOGITS)
    assert sorted(spec.predictions) == ["classes", "logits", "probabilities"]
    np.testing.assert_allclose(spec.predictions["probabilities"].numpy(), 1 / (1 + np.exp(-LOGITS.numpy())),
                               rtol=1e-6)
    assert spec.predictions["classes"].numpy().tolist() == [[b"a", b"b", b"c"]] * 2
    assert sorted(spec.export_outputs) == ["classification", "predict", "serving_default"]


def test_bad_labels_and_arguments_are_named():
    head = canned.MultiLabelHead(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"values in \[0, 1\]"):
        head.loss(tf.constant([[2, 0, 1], [0, 1, 0]]), LOGITS)
    with pytest.raises(ValueError, match="last dimension to be n_classes = 3"):
        head.loss(tf.constant([[1, 0], [0, 1]]), LOGITS)
    with pytest.raises(ValueError, match="labels are float32; a multi-label head takes a multi-hot integer"):
        head.loss(tf.constant([[1.0, 0, 1], [0, 1, 0]]), LOGITS)
    with pytest.raises(ValueError, match="n_classes must be > 1"):
        canned.MultiLabelHead(1)
    with pytest.raises(ValueError, match=r"thresholds must be in \(0, 1\), got 1.5"):
        canned.MultiLabelHead(3, thresholds=[1.5])
    with pytest.raises(ValueError, match="classes_for_class_based_metrics names 'z'"):
        canned.MultiLabelHead(3, label_vocabulary=["a", "b", "c"], classes_for_class_based_metrics=["z"])
