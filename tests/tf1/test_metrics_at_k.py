"""tf.compat.v1.metrics' ranking family (precision, recall and average precision at k) streamed by the framework
over towers and batches, against TensorFlow's own TF1 metrics run in a TF1 graph session over the same batches."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import metrics_at_k
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(3)
SCORES = RNG.rand(24, 6).astype(np.float32)
ONE_ID = RNG.randint(0, 6, 24).astype(np.int64)
TWO_IDS = np.stack([ONE_ID, RNG.randint(0, 6, 24)], axis=1).astype(np.int64)
WEIGHTS = RNG.choice([0.0, 1.0, 2.5], 24).astype(np.float32)

# (the metric, its arguments beyond labels and predictions, the labels)
CASES = {
    "recall_at_3": ("recall_at_k", {"k": 3}, TWO_IDS),
    "recall_at_2_class4": ("recall_at_k", {"k": 2, "class_id": 4}, TWO_IDS),
    "precision_at_2": ("precision_at_k", {"k": 2}, ONE_ID),
    "precision_at_3_class1_weighted": ("precision_at_k", {"k": 3, "class_id": 1, "weights": WEIGHTS}, TWO_IDS),
    "sparse_precision_at_1": ("sparse_precision_at_k", {"k": 1}, ONE_ID),
    "average_precision_at_3": ("average_precision_at_k", {"k": 3}, TWO_IDS),
    "average_precision_at_4_weighted": ("sparse_average_precision_at_k", {"k": 4, "weights": WEIGHTS}, ONE_ID),
    "recall_at_top_2": ("recall_at_top_k", {"top": 2}, TWO_IDS),
    "precision_at_top_3_weighted": ("precision_at_top_k", {"top": 3, "weights": WEIGHTS}, ONE_ID),
}


def _arguments(kwargs, rows):
    """The case's arguments for these rows: weights sliced, 'top' (the *_at_top_k cases) left out."""
    return {key: (value[rows] if key == "weights" else value) for key, value in kwargs.items() if key != "top"}


def _predictions(kwargs, scores):
    """Scores, or for the *_at_top_k cases the ids of the top ones."""
    return tf.math.top_k(scores, kwargs["top"]).indices if "top" in kwargs else scores


def tensorflows_own(function, kwargs, labels, batch_size=8):
    """What TF1's metric gives over the batches, run by TensorFlow in a TF1 graph session."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        scores = tf.compat.v1.placeholder(tf.float32, [None, 6])
        ids = tf.compat.v1.placeholder(tf.int64, [None] + list(labels.shape[1:]))
        weights = tf.compat.v1.placeholder(tf.float32, [None])
        given = dict(kwargs, weights=weights) if "weights" in kwargs else dict(kwargs)
        value, update = getattr(tf.compat.v1.metrics, function)(
            ids, _predictions(kwargs, scores), **{k: v for k, v in given.items() if k != "top"})
        session.run(tf.compat.v1.local_variables_initializer())
        for start in range(0, len(SCORES), batch_size):
            rows = slice(start, start + batch_size)
            feed = {scores: SCORES[rows], ids: labels[rows]}
            if "weights" in kwargs:
                feed[weights] = kwargs["weights"][rows]
            session.run(update, feed)
        return session.run(value)


def model_fn(features, labels, mode):
    bias = tf.compat.v1.get_variable("bias", [6], initializer=tf.compat.v1.zeros_initializer())
    scores = features["scores"] + bias
    eval_metric_ops = {}
    for name, (function, kwargs, _) in CASES.items():
        given = {key: features["weights"] if key == "weights" else value for key, value in kwargs.items()}
        eval_metric_ops[name] = getattr(metrics_at_k, function)(
            features[name], _predictions(kwargs, scores), **{k: v for k, v in given.items() if k != "top"})
    loss = tf.reduce_mean(tf.square(scores))
    return common.EstimatorSpec(mode, loss=loss, eval_metric_ops=eval_metric_ops,
                                train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(
                                    loss, tf1_train.get_global_step()))


def input_fn():
    features = {"scores": SCORES, "weights": WEIGHTS}
    features.update({name: labels for name, (_, _, labels) in CASES.items()})
    return tf.data.Dataset.from_tensor_slices((features, ONE_ID)).batch(8)


def test_the_ranking_metrics_stream_over_towers_as_tensorflows_tf1_metrics(tmp_path):
    est = common.Estimator(model_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(input_fn, steps=1)
    results = est.evaluate(input_fn)
    for name, (function, kwargs, labels) in CASES.items():
        theirs = tensorflows_own(function.replace("sparse_", "") if "top" in kwargs else function, kwargs, labels)
        assert results[name] == pytest.approx(theirs, rel=1e-6), name


@pytest.mark.parametrize("function,kwargs", [
    ("recall_at_k", {"k": 2}), ("precision_at_k", {"k": 3, "class_id": 2}), ("average_precision_at_k", {"k": 3})])
def test_sparse_labels_and_a_class_never_seen_give_tensorflows_numbers(function, kwargs):
    def labels():  # (three ids, one, two, three)
        return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2]],
                               np.array([1, 4, 0, 0, 3, 2, 5, 3]), [4, 3])
    scores = SCORES[:4]
    value, _ = getattr(metrics_at_k, function)(labels(), scores, **kwargs)
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        theirs, update = getattr(tf.compat.v1.metrics, function)(labels(), tf.constant(scores), **kwargs)
        session.run(tf.compat.v1.local_variables_initializer())
        session.run(update)
        np.testing.assert_allclose(float(value), session.run(theirs), rtol=1e-6)
    no_ids = tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int64), [4, 3])
    assert np.isnan(float(metrics_at_k.average_precision_at_k(no_ids, scores, k=2)[0]))  # (0 relevant: TF1's 0 / 0)
    never, _ = metrics_at_k.precision_at_k(ONE_ID[:4], np.eye(6, dtype=np.float32)[[0, 1, 2, 3]], k=1, class_id=5)
    assert np.isnan(float(never))  # (0 / 0, as TF1's)
