"""TF1 (value, update_op) metrics in model_fn stream over towers and batches with TF1 arithmetic."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
import common.hooks
from common.state import checkpoints
from common.tf1 import layers, metrics
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(7)
IMAGES = RNG.rand(96, 6, 6, 1).astype(np.float32)
LABELS = RNG.randint(0, 2, 96).astype(np.int64)
IMAGES[LABELS == 1, 1:4, 1:4, 0] += 0.8


def tf1_fn(features, labels, mode):
    training = mode == common.ModeKeys.TRAIN
    net = layers.conv2d(features, 4, 3, activation=tf.nn.relu)
    net = layers.batch_normalization(net, momentum=0.5, training=training)
    net = layers.max_pooling2d(net, 2, 2)
    net = layers.dropout(layers.flatten(net), rate=0.25, training=training)
    logits = layers.dense(net, 2, name="logits")
    probabilities = tf.nn.softmax(logits)
    classes = tf.argmax(logits, axis=1)
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions={"classes": classes, "probabilities": probabilities})
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    positive = tf.equal(labels, 1)
    eval_metric_ops = {
        "accuracy": metrics.accuracy(labels, classes),
        "precision": metrics.precision(positive, tf.equal(classes, 1)),
        "recall": metrics.recall(positive, tf.equal(classes, 1)),
        "auc": metrics.auc(positive, probabilities[:, 1]),
        "mse": metrics.mean_squared_error(tf.one_hot(labels, 2), probabilities),
        "rmse": metrics.root_mean_squared_error(tf.one_hot(labels, 2), probabilities),
        "mean_p1": metrics.mean(probabilities[:, 1], weights=tf.cast(positive, tf.float32)),
        "tp": metrics.true_positives(positive, tf.equal(classes, 1)),
        "fp": metrics.false_positives(positive, tf.equal(classes, 1)),
        "tn": metrics.true_negatives(labels, classes),  # any numbers, read as bool
        "fn_weighted": metrics.false_negatives(positive, tf.equal(classes, 1), weights=2.0),
    }
    # a value TF1 programs derived from pairs' values, its update op grouping theirs
    (p, p_op), (r, r_op) = eval_metric_ops["precision"], eval_metric_ops["recall"]
    eval_metric_ops["f1"] = (2 * p * r / (p + r), tf.group(p_op, r_op))
    train_op = tf1_train.MomentumOptimizer(0.1, 0.9).minimize(loss, tf1_train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=eval_metric_ops)


def input_fn(training, batch_size=16):
    dataset = tf.data.Dataset.from_tensor_slices((IMAGES, LABELS))
    return (dataset.repeat() if training else dataset).batch(batch_size)


@pytest.mark.parametrize("strategy", ["CPU", "GPU"])
def test_tf1_layers_and_metrics_train_and_stream_on_two_towers(tmp_path, strategy):
    est = common.Estimator(tf1_fn, str(tmp_path), config=common.RunConfig(
        tf_random_seed=3, save_checkpoints_steps=10, device_plan=models.plan(2, strategy)))
    before = est.evaluate(lambda: input_fn(False, 20))["loss"]
    est.train(lambda: input_fn(True), steps=20)
    results = est.evaluate(lambda: input_fn(False, 20))  # the last batch of 16 splits 8 + 8
    assert results["loss"] < before

    predicted = list(est.predict(lambda: input_fn(False, 20)))
    classes = np.array([p["classes"] for p in predicted])
    p = np.stack([p["probabilities"] for p in predicted])
    positive, said_positive = LABELS == 1, classes == 1
    assert results["accuracy"] == pytest.approx(np.mean(classes == LABELS))
    assert results["precision"] == pytest.approx((positive & said_positive).sum() / said_positive.sum())
    assert results["recall"] == pytest.approx((positive & said_positive).sum() / positive.sum())
    squared = (np.eye(2)[LABELS] - p) ** 2
    assert results["mse"] == pytest.approx(squared.mean(), rel=1e-5)
    assert results["rmse"] == pytest.approx(np.sqrt(squared.mean()), rel=1e-5)
    assert results["mean_p1"] == pytest.approx(p[positive, 1].mean(), rel=1e-5)
    assert results["f1"] == pytest.approx(2 * results["precision"] * results["recall"]
                                          / (results["precision"] + results["recall"]), rel=1e-6)
    counts = [results[k] for k in ("tp", "fp", "tn", "fn_weighted")]
    assert counts == [(positive & said_positive).sum(), (~positive & said_positive).sum(),
                      (~positive & ~said_positive).sum(), 2 * (positive & ~said_positive).sum()]
    assert sum(counts) - counts[3] / 2 == len(LABELS)
    auc = keras.metrics.AUC(num_thresholds=200)
    auc.update_state(positive, p[:, 1])
    assert results["auc"] == pytest.approx(float(auc.result()), abs=1e-6)

    saved = checkpoints.variable_shapes(tf.train.latest_checkpoint(str(tmp_path)))
    assert saved["conv2d/kernel"] == [3, 3, 1, 4] and saved["logits/kernel"] == [16, 2]
    assert "batch_normalization/moving_mean" in saved


def test_a_trailing_dimension_of_one_is_squeezed_as_tf1s_metrics_squeezed_it():
    labels, predictions = tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant([[1.5], [2.0], [2.0], [4.0]])
    weights = tf.constant([[1.0], [1.0], [2.0], [0.0]])
    value, _ = metrics.mean_squared_error(labels, predictions, weights=weights)
    assert float(value) == pytest.approx((0.25 + 0.0 + 2 * 1.0) / 4)  # not the [4, 4] broadcast's
    value, _ = metrics.accuracy(tf.constant([[1], [0], [1]]), tf.constant([1, 1, 1]))
    assert float(value) == pytest.approx(2 / 3)
    # weights of one dimension fewer weigh whole rows (TF1's expand_dims), also when rows are as long as the batch
    value, _ = metrics.mean(tf.constant([[1.0, 2.0], [3.0, 4.0]]), weights=tf.constant([1.0, 0.0]))
    assert float(value) == pytest.approx(1.5)  # TF 2.15's tf.compat.v1.metrics.mean gave 1.5
    value, _ = metrics.mean_squared_error(tf.zeros([4, 3]), tf.ones([4, 3]) * [[1.0], [2.0], [0.0], [1.0]],
                                          weights=tf.constant([1.0, 1.0, 0.0, 0.0]))
    assert float(value) == pytest.approx((3 * 1.0 + 3 * 4.0) / 6)


class _Smallest(keras.metrics.Metric):
    """A Keras metric whose reset value is not zero."""

    def __init__(self):
        super().__init__(name="smallest")
        self.smallest = self.add_variable((), keras.initializers.Constant(np.inf), name="smallest")

    def update_state(self, values):
        self.smallest.assign(tf.minimum(self.smallest, tf.reduce_min(values)))

    def reset_state(self):
        self.smallest.assign(np.inf)

    def result(self):
        return self.smallest


def test_a_keras_metric_is_reset_its_own_way_before_each_evaluation(tmp_path):
    def smallest_fn(features, labels, mode):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
        loss = tf.square(scale - 1.0)
        smallest = _Smallest()
        smallest.update_state(features * scale)
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss),
                                    eval_metric_ops={"smallest": smallest})

    est = common.Estimator(smallest_fn, str(tmp_path))
    values = np.array([3.0, 4.0, 5.0, 6.0], np.float32)
    est.train(lambda: tf.data.Dataset.from_tensors((values, values)).repeat(), steps=1)
    for shift in (0.0, 1.0):  # the second evaluation does not see the first's minimum
        results = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((values + shift, values)).batch(2))
        assert results["smallest"] == 3.0 + shift
    assert type(results["smallest"]) is np.float32 and type(results["global_step"]) is np.int64  # tf.estimator's


def test_auc_of_tensors_of_unknown_rank_is_the_flattened_auc_as_tf1_computed_it(tmp_path):
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.7, 0.3]], np.float32)
    classes = np.array([[0], [1], [0], [1]])

    def model_fn(features, labels, mode):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
        loss = tf.square(scale - 1.0)
        one_hot = tf.one_hot(tf.squeeze(labels), 2, on_value=True, off_value=False)  # squeezed: rank unknown
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss),
                                    eval_metric_ops={"auroc": metrics.auc(one_hot, features * scale)})

    est = common.Estimator(model_fn, str(tmp_path))
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((probabilities, classes)).batch(4), steps=1)
    flat, _ = metrics.auc(tf.one_hot(classes[:, 0], 2) > 0, tf.constant(probabilities))
    assert result["auroc"] == pytest.approx(float(flat))
