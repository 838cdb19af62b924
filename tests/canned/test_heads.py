"""Heads on their own: losses as tf.estimator reduced them, metrics, predictions and export outputs."""

import functools
import os

import numpy as np
import pytest
import tensorflow as tf

from common import canned
from common.canned import heads
from common.spec.model_fn import ModeKeys

LOGITS3 = tf.constant([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])


def test_multi_class_loss_is_weighted_sum_over_batch_size_or_sum():
    labels = tf.constant([1, 2])
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS3).numpy()
    weights = {"w": tf.constant([2.0, 0.5])}
    head = canned.MultiClassHead(3, weight_column="w")
    assert float(head.loss(labels, LOGITS3, weights)) == pytest.approx((2 * per_example[0] + 0.5 * per_example[1]) / 2)
    summed = canned.MultiClassHead(3, weight_column="w", loss_reduction="sum")
    assert float(summed.loss(labels, LOGITS3, weights)) == pytest.approx(2 * per_example[0] + 0.5 * per_example[1])


def test_predictions_and_export_outputs_carry_tf_estimators_keys():
    head = canned.MultiClassHead(3, label_vocabulary=["p", "q", "r"])
    spec = head.create_estimator_spec({}, ModeKeys.PREDICT, LOGITS3)
    p = spec.predictions
    assert sorted(p) == ["all_class_ids", "all_classes", "class_ids", "classes", "logits", "probabilities"]
    assert p["classes"].numpy().tolist() == [[b"q"], [b"r"]]
    assert p["all_classes"].numpy().tolist() == [[b"p", b"q", b"r"]] * 2
    assert sorted(spec.export_outputs) == ["classification", "predict", "serving_default"]
    binary = canned.BinaryClassHead().create_estimator_spec({}, ModeKeys.PREDICT, tf.constant([[0.3], [-2.0]]))
    assert binary.predictions["class_ids"].numpy().tolist() == [[1], [0]]
    np.testing.assert_allclose(binary.predictions["probabilities"].numpy()[:, 1],
                               1 / (1 + np.exp([-0.3, 2.0])), rtol=1e-6)
    assert sorted(binary.export_outputs) == ["classification", "predict", "regression", "serving_default"]
    regression = canned.RegressionHead(label_dimension=2).create_estimator_spec({}, ModeKeys.PREDICT, LOGITS3[:, :2])
    # (tf.estimator 2.15's, label_dimension 2 too: serving_default and regression regress [batch, 2] outputs)
    assert sorted(regression.export_outputs) == ["predict", "regression", "serving_default"]


def test_labels_out_of_range_or_of_the_wrong_kind_are_named():
    head = canned.MultiClassHead(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Labels must be integers in \[0, 3\)"):
        head.loss(tf.constant([1, 3]), LOGITS3)
    with pytest.raises(ValueError, match="label_vocabulary"):
        head.loss(tf.constant(["a", "b"]), LOGITS3)
    with pytest.raises(ValueError, match="weight_column 'w' is not among the features"):
        canned.RegressionHead(weight_column="w").loss(tf.constant([1.0]), tf.constant([[1.0]]), {"x": 1})
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        canned.MultiClassHead(2)
    assert heads.classification_head(2).__class__ is canned.BinaryClassHead


def test_a_loss_fn_with_other_arguments_or_another_shape_is_refused_by_name():
    with pytest.raises(ValueError, match=r"loss_fn takes \['labels', 'y_pred'\]"):
        canned.BinaryClassHead(loss_fn=lambda labels, y_pred: labels)
    with pytest.raises(ValueError, match=r"loss_fn takes \['labels', 'logits', 'mode'\]"):
        canned.RegressionHead(loss_fn=lambda labels, logits, mode: labels)
    per_batch = canned.MultiClassHead(3, loss_fn=lambda labels, logits: tf.reduce_sum(logits, axis=-1))
    with pytest.raises(ValueError, match=r"loss_fn must return a Tensor of shape \[batch, 1\].*returned shape \(2,\)"):
        per_batch.loss(tf.constant([1, 2]), LOGITS3)
    two_targets = canned.RegressionHead(label_dimension=2, loss_fn=lambda labels, logits: tf.abs(logits - labels))
    assert float(two_targets.loss(tf.constant([[1.0, 1.0], [0.0, 0.0]]), LOGITS3[:, :2])) == pytest.approx(
        (0.0 + 1.0 + 0.0 + 1.0) / 4)


def test_a_multi_class_loss_fn_gets_class_ids_in_the_labels_dtype():
    seen = []

    def loss_fn(labels, logits):
        seen.append(labels.dtype)
        return tf.zeros_like(logits[:, :1])

    canned.MultiClassHead(3, loss_fn=loss_fn).loss(tf.constant([1, 2], tf.int32), LOGITS3)
    canned.MultiClassHead(3, label_vocabulary=["a", "b", "c"], loss_fn=loss_fn).loss(tf.constant(["a", "c"]), LOGITS3)
    canned.BinaryClassHead(loss_fn=loss_fn).loss(tf.constant([1, 0], tf.int32), LOGITS3[:, :1])
    assert seen == [tf.int32, tf.int64, tf.float32]  # as tf.estimator 2.15's heads gave them


def test_a_loss_fn_is_read_as_tf_estimator_read_it_kwargs_and_partials_included():
    def scaled(labels, logits, scale, **unused):
        return scale * tf.abs(logits - labels)

    head = canned.RegressionHead(loss_fn=functools.partial(scaled, scale=3.0))
    assert float(head.loss(tf.constant([1.0, 0.0]), tf.constant([[2.0], [0.0]]))) == pytest.approx(3.0 * 1.0 / 2)
    with pytest.raises(ValueError, match="loss_fn takes"):  # logits bound by the partial: the head cannot give them
        canned.RegressionHead(loss_fn=functools.partial(scaled, logits=1.0))


def test_one_hot_labels_into_a_class_id_head_are_refused_before_training_as_tf_estimator_refused_them(tmp_path):
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    classifier = canned.DNNClassifier([3], columns, model_dir=str(tmp_path), n_classes=3)
    one_hot = tf.one_hot([0, 2, 1, 0], 3)
    features = {"x": np.ones((4, 2), np.float32)}
    with pytest.raises(ValueError, match=r"Mismatched label shape. Expected labels dimension=1.  Received 3. "
                                         r"Suggested Fix: If your classifier expects one-hot encoding label"):
        classifier.train(lambda: tf.data.Dataset.from_tensors((features, one_hot)).repeat(), steps=5)
    assert not tf.io.gfile.glob(os.path.join(tmp_path, "model.ckpt-*"))  # refused before any step, nothing written


def test_a_negative_example_weight_is_refused_naming_the_weight_column(tmp_path):
    """tf.estimator 2.15 trained on with negative weights (an evaluation loss of -0.73); the step that reads
    one fails here, naming the column, and the model dir keeps its checkpoints."""
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    weights = np.ones(8, np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x, "w": weights}, (x > 0).astype(np.int64))).batch(4)

    est = canned.LinearClassifier([tf.feature_column.numeric_column("x")], weight_column="w",
                                  model_dir=str(tmp_path))
    est.train(input_fn, steps=2)
    weights[5] = -1.0  # the second batch holds it
    with pytest.raises(ValueError, match="input_fn's data: weight_column 'w' holds a negative weight; example "
                                         "weights must be >= 0"):
        est.train(input_fn, steps=2)
    with pytest.raises(ValueError, match="weight_column 'w' holds a negative weight"):
        est.evaluate(input_fn)
    assert est.latest_checkpoint().endswith("model.ckpt-2")


@pytest.mark.parametrize("wrap", ["indicator", "linear"])
def test_identity_ids_beyond_num_buckets_are_refused_naming_the_column_and_the_ids(tmp_path, wrap):
    """tf.estimator 2.15 read an id beyond num_buckets as no category at all (an indicator of zeros), silently."""
    ids = np.array([0, 1, 2, 3, 1, 2, 9, 3], np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"id": ids[:, None]}, (ids % 2).astype(np.int64))).batch(4)

    column = tf.feature_column.categorical_column_with_identity("id", num_buckets=4)
    est = canned.DNNClassifier([4], [tf.feature_column.indicator_column(column)], model_dir=str(tmp_path)) \
        if wrap == "indicator" else canned.LinearClassifier([column], model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"input_fn's data: categorical_column_with_identity\('id', num_buckets=4\) "
                                         r"got ids outside \[0, 4\): 9$"):
        est.train(input_fn, steps=2)
    assert est.latest_checkpoint().endswith("model.ckpt-0")  # the first batch trained on, nothing lost
