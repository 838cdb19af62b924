"""common.adapters.graph_input: input_fns built on TF1's queue runners or placeholders feeding the Estimator:
on two towers until their num_epochs end them, marked by the upgrade, fed by a hook after the session exists,
as on TensorFlow 2.15 (the queue pipelines themselves: tests/tf1/test_graph_input.py)."""

import numpy as np
import pytest
import tensorflow as tf

import common
import common.adapters.session_run_hooks
from common.adapters import graph_input
from common.adapters import tensor_inputs as tf1_data
from common.tf1 import train as tf1_train
from tests import models, queue_records

V1, CASES = queue_records.V1, queue_records.CASES


@pytest.fixture
def record_files(tmp_path):
    return queue_records.write_record_files(tmp_path)


def test_a_queue_input_fn_trains_on_two_towers_until_its_epochs_end_and_evaluates_to_its_end(record_files, tmp_path):
    def input_fn(params):
        ids, xs = V1.train.batch(queue_records.records(record_files, params["epochs"]), batch_size=4)
        return {"x": tf.expand_dims(xs, 1)}, tf.cast(ids, tf.float32) * 0.5

    def model_fn(features, labels, mode, params):
        kernel = V1.get_variable("w", [1, 1], initializer=V1.zeros_initializer())
        predictions = tf.matmul(features["x"], kernel)[:, 0]
        loss = tf.reduce_mean(tf.square(predictions - labels))
        return common.EstimatorSpec(mode, loss=loss, predictions=predictions,
                                    train_op=tf1_train.GradientDescentOptimizer(1e-4).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path), params={"epochs": 2},
                           config=common.RunConfig(device_plan=models.plan(2)))
    est.train(input_fn)  # no steps: the input's 2 epochs of 12 records end it, 6 batches of 4
    assert est.get_variable_value("global_step") == 6
    assert 0 < est.get_variable_value("w")[0, 0] < 1  # trained towards 1 (labels are x)
    result = est.evaluate(lambda: input_fn({"epochs": 1}))
    assert result["global_step"] == 6 and np.isfinite(result["loss"])
    est.train(input_fn, steps=2)  # a new train() call reads the input from its start again
    assert est.get_variable_value("global_step") == 8


def test_a_marked_queue_input_fn_gives_the_program_its_first_batch_and_still_feeds_the_estimator(record_files,
                                                                                                tmp_path):
    @graph_input.input_fn_in_graph  # (what the upgrade puts on a function that builds queue-runner input)
    def input_fn(num_epochs=2, batch_size=4):
        return V1.train.batch(queue_records.records(record_files, num_epochs), batch_size=batch_size)

    ids, xs = input_fn()  # the program looks at a batch, as TF1 notebooks did: TF 2.15's first one
    assert [ids.numpy().tolist(), xs.numpy().tolist()] == CASES["tfrecord_epochs2_batch4_allow_smaller_False"][
        "batches"][0]

    def model_fn(features, labels, mode):
        kernel = V1.get_variable("w", [1, 1], initializer=V1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features[:, None], kernel)[:, 0] - tf.cast(labels, tf.float32)))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(1e-4).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: input_fn()[::-1])  # (xs as the features, ids as the labels)
    assert est.get_variable_value("global_step") == 6  # its 2 epochs of 12 records, as in a graph
    with pytest.raises(ValueError, match="input_fn gave no batch: its input ended before the first one"):
        input_fn(num_epochs=1, batch_size=20)


class _IteratorInitializerHook(common.adapters.session_run_hooks.SessionRunHook):
    """The 2017 blog posts' way to feed numpy arrays: placeholders, an initializable iterator, and a hook that
    runs its initializer fed the arrays once the session exists."""

    def __init__(self):
        self.iterator_initializer_func = None

    def after_create_session(self, session, coord):
        self.iterator_initializer_func(session)


def _fed_input(x, y, batch_size):
    hook = _IteratorInitializerHook()

    def input_fn():
        x_placeholder = common.placeholder(tf.float32, x.shape)
        y_placeholder = common.placeholder(tf.float32, y.shape)
        dataset = V1.data.Dataset.from_tensor_slices((x_placeholder, y_placeholder)).repeat(None).batch(batch_size)
        iterator = V1.data.make_initializable_iterator(dataset)
        hook.iterator_initializer_func = lambda session: session.run(
            iterator.initializer, feed_dict={x_placeholder: x, y_placeholder: y})
        features, labels = iterator.get_next()
        return {"x": features}, labels

    return input_fn, hook


def test_placeholders_a_hook_feeds_in_after_create_session_train_and_evaluate_as_on_tf215(tmp_path):
    rs = np.random.RandomState(0)
    x = rs.randn(64, 4).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)

    def model_fn(features, labels, mode):
        w = V1.get_variable("w", [4, 1], initializer=V1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, 0] - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=V1.train.get_global_step()))

    est = common.Estimator(model_fn, str(tmp_path))
    input_fn, hook = _fed_input(x, y, 16)
    est.train(input_fn, hooks=[hook], steps=40)
    # TF 2.15's tf.compat.v1.estimator on the same program: w after 40 steps, then the loss of 4 batches
    np.testing.assert_allclose(est.get_variable_value("w")[:, 0], [1.0021713972091675, -1.9980331659317017,
                                                                    0.49703139066696167, 2.997366428375244], rtol=1e-5)
    input_fn, hook = _fed_input(x, y, 16)
    assert est.evaluate(input_fn, hooks=[hook], steps=4)["loss"] == pytest.approx(1.6353499e-05, rel=1e-3)


def test_a_queue_input_fn_returning_no_labels_trains_as_tf1_took_it(tmp_path):
    def input_fn():  # (features, None): a model_fn that needs no labels, as TF1 programs returned it
        x, = V1.train.slice_input_producer([np.arange(8, dtype=np.float32).reshape(8, 1)], shuffle=False)
        return {"x": V1.train.batch([x], batch_size=4)}, None

    batches = list(tf1_data.dataset_of(lambda: input_fn()).take(2))  # (as_numpy_iterator fails on a None
    assert [features["x"].numpy().ravel().tolist() for features, _ in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert all(labels is None for _, labels in batches)  # part before TensorFlow 2.20)
    seen = []

    def model_fn(features, labels, mode):
        seen.append(labels)
        weight = V1.get_variable("w", [1, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], weight) - 1.0))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.01).minimize(
            loss, common.get_global_step()))

    estimator = common.Estimator(model_fn, str(tmp_path))
    estimator.train(input_fn, steps=3)
    assert estimator.get_variable_value("global_step") == 3 and set(seen) == {None}
