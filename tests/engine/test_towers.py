"""Splitting a batch over towers, averaging the towers' gradients on each variable device, and what each tower gets."""

import numpy as np
import pytest
import tensorflow as tf

from common.engine import towers as tower_math


def test_split_batch_keeps_order_and_dict_structure():
    x = np.arange(12, dtype=np.float32).reshape(12, 1)
    shards = tower_math.split_batch(({"a": x, "b": x * 10}, np.arange(12)), 4)
    assert [labels.numpy().tolist() for _, labels in shards] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert [sorted(features) for features, _ in shards] == [["a", "b"]] * 4
    np.testing.assert_array_equal(shards[2][0]["b"].numpy().ravel(), [60, 70, 80])


def test_split_batch_uneven_only_when_allowed():
    with pytest.raises(ValueError, match="batch of 10 examples cannot be split evenly over 4 towers"):
        tower_math.split_batch(tf.zeros([10, 2]), 4)
    shards = tower_math.split_batch(tf.range(10), 4, allow_uneven=True)
    assert [s.numpy().tolist() for s in shards] == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert [s.shape[0] for s in tower_math.split_batch(tf.range(3), 4, allow_uneven=True)] == [1, 1, 1, 0]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def dynamic(batch):
        return tower_math.split_batch(batch, 4)

    assert [s.numpy().tolist() for s in dynamic(tf.range(8))] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="multiple of the number of towers"):
        dynamic(tf.range(6))


def test_split_batch_rejects_disagreeing_batch_sizes():
    with pytest.raises(ValueError, match="disagree on the batch size"):
        tower_math.split_batch((tf.zeros([4, 2]), tf.zeros([6])), 2)


def test_gradients_are_averaged_on_the_variables_device():
    with tf.device("/cpu:1"):
        first = tf.Variable(tf.zeros([3]))
    with tf.device("/cpu:2"):
        second = tf.Variable(tf.zeros([2, 2]))
    tower_grads = []
    for device, scale in (("/cpu:0", 1.0), ("/cpu:3", 3.0)):
        with tf.device(device):
            tower_grads.append([tf.fill([3], scale), tf.fill([2, 2], -scale)])
    averaged = tower_math.average_gradients(tower_grads, [first, second])
    assert averaged[0].device.endswith("CPU:1")
    assert averaged[1].device.endswith("CPU:2")
    np.testing.assert_allclose(averaged[0].numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(averaged[1].numpy(), -2.0 * np.ones([2, 2]))

    @tf.function
    def traced():
        return tower_math.average_gradients(tower_grads, [first, second])

    graph = traced.get_concrete_function().graph
    devices = {op.device for op in graph.get_operations() if op.type in ("AddN", "Mul")}
    assert {d.split("/device:")[-1] for d in devices} == {"CPU:1", "CPU:2"}
    assert tower_math.average_gradients([[None], [None]], [first]) == [None]


def test_each_tower_after_the_first_shifts_the_first_element_of_integer_state():
    values = [tf.constant([5, 7], tf.int64), tf.constant([1.5, 2.5]), tf.constant(3, tf.int32)]
    assert [v.numpy().tolist() for v in tower_math.integer_state_offset(values, 0)] == [[5, 7], [1.5, 2.5], 3]
    assert [v.numpy().tolist() for v in tower_math.integer_state_offset(values, 2)] == [[7, 7], [1.5, 2.5], 5]
