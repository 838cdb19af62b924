"""The interface the TF1 runtime reads the running model_fn call through."""

import threading

import tensorflow as tf

import common
from common.tf1_runtime import caller


class _Answers:
    deferring = False

    def name_of(self, variable):
        return "answered"

    def defer_update(self, optimizer, grads_and_vars, apply):
        raise AssertionError("not called here")


def test_current_is_none_outside_and_the_caller_inside_nested_and_restored():
    outer, inner = _Answers(), _Answers()
    assert caller.current() is None
    with caller.answering(outer):
        assert caller.current() is outer
        with caller.answering(inner):
            assert caller.current() is inner
        assert caller.current() is outer
    assert caller.current() is None


def test_another_thread_does_not_see_this_threads_caller():
    seen = []
    with caller.answering(_Answers()):
        thread = threading.Thread(target=lambda: seen.append(caller.current()))
        thread.start()
        thread.join()
    assert seen == [None]


def test_inside_model_fn_the_estimators_registry_answers(tmp_path):
    seen = {}

    def model_fn(features, labels, mode):
        running = caller.current()
        dense = common.get_module("dense", lambda: tf.keras.layers.Dense(1, name="dense"))
        loss = tf.reduce_mean(tf.square(dense(features) - labels))
        seen["kernel"] = running.name_of(dense.kernel)
        seen["deferring"] = running.deferring
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(
            lambda: tf.keras.optimizers.SGD(0.1)))

    def input_fn():
        return tf.data.Dataset.from_tensors((tf.ones([2, 3]), tf.ones([2, 1]))).repeat()

    common.Estimator(model_fn, str(tmp_path)).train(input_fn, max_steps=1)
    assert seen["kernel"] == "dense/kernel"
    assert seen["deferring"] is True  # (a train tower: an update waits for the towers)
    assert caller.current() is None
