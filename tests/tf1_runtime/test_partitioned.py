"""TF1's partitioned variables (common.tf1_runtime.partitioned): TF1's part sizes and initializers, the parts a
store makes where variables are sharded (a parameter-server job's chief; the ps count stubbed here, the real
job in tests/estimator/test_scheduled_steps.py), and checkpoints that hold the whole variable either way."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import train as tf1_train
from common.tf1_runtime import partitioned

V1 = tf.compat.v1
TABLE = np.arange(40, dtype=np.float32).reshape(10, 4) / 40.0


def test_parts_are_tf1s_the_first_ones_a_row_larger():
    assert partitioned.slices([10, 4], [3, 1]) == [([0, 0], [4, 4]), ([4, 0], [3, 4]), ([7, 0], [3, 4])]
    assert partitioned.slices([6, 9], [1, 2]) == [([0, 0], [6, 5]), ([0, 5], [6, 4])]


def test_a_tf1_initializer_is_told_its_part_and_scales_by_the_whole_variable():
    whole = V1.glorot_uniform_initializer(seed=1)
    part = partitioned.part_initializer(whole, [1000, 10], [500, 0], [500, 10])
    values = part([500, 10], dtype=tf.float32).numpy()
    limit = np.sqrt(6.0 / (1000 + 10))  # the whole variable's fans, not the part's (sqrt(6 / 510))
    assert values.max() <= limit and values.max() > 0.9 * limit
    sliced = partitioned.part_initializer(TABLE, [10, 4], [5, 0], [5, 4])  # a value: its slice
    np.testing.assert_array_equal(sliced, TABLE[5:])


def test_one_host_makes_a_partitioned_variable_whole():
    assert partitioned.sharding_partitions(V1.fixed_size_partitioner(2), "emb", [10, 4], tf.float32) is None


def _model_fn(features, labels, mode):
    table = V1.get_variable("emb", [10, 4], initializer=V1.constant_initializer(TABLE),
                            partitioner=V1.fixed_size_partitioner(3))
    logits = tf.reduce_sum(tf.nn.embedding_lookup(table, features["id"]), axis=1)
    if mode == common.ModeKeys.PREDICT:
        return common.EstimatorSpec(mode, predictions=logits)
    loss = tf.reduce_mean(tf.square(logits - labels))
    return common.EstimatorSpec(mode, loss=loss, predictions=logits, train_op=tf1_train.AdagradOptimizer(0.5).minimize(
        loss, global_step=V1.train.get_global_step()))


def _input(repeat=False):
    ids = np.arange(10, dtype=np.int64)
    dataset = tf.data.Dataset.from_tensors(({"id": ids}, np.linspace(-1, 1, 10).astype(np.float32)))
    return lambda: dataset.repeat() if repeat else dataset


def test_parts_train_and_their_checkpoint_holds_the_whole_variable_one_host_reads(tmp_path, monkeypatch):
    with monkeypatch.context() as sharding:
        sharding.setattr(partitioned, "_ps_count", lambda: 3)  # (as on a chief with 3 ps tasks)
        est = common.Estimator(_model_fn, str(tmp_path))
        est.train(_input(repeat=True), steps=3)
        parts = sorted(name for name in est.variable_values() if name.startswith("emb/"))
        assert parts == ["emb/part_0", "emb/part_0/Adagrad", "emb/part_1", "emb/part_1/Adagrad", "emb/part_2",
                         "emb/part_2/Adagrad"]
        assert [est.variable_values()[f"emb/part_{i}"].shape for i in range(3)] == [(4, 4), (3, 4), (3, 4)]
        sharded = next(est.predict(_input(), yield_single_examples=False))  # (outside training: the same parts)
    saved = dict(tf.train.list_variables(str(tmp_path)))
    assert saved["emb"] == [10, 4] and saved["emb/Adagrad"] == [10, 4] and not [n for n in saved if "part_" in n]
    trained = est.get_variable_value("emb")
    assert trained.shape == (10, 4) and not np.allclose(trained, TABLE)
    whole = common.Estimator(_model_fn, str(tmp_path))  # one host: "emb" whole, restored from the slices
    np.testing.assert_allclose(next(whole.predict(_input(), yield_single_examples=False)), sharded, rtol=1e-6)
    whole.train(_input(repeat=True), steps=1)  # and its own checkpoint goes on from there
    assert whole.get_variable_value("global_step") == 4


def test_a_partitioner_that_splits_two_dimensions_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(partitioned, "_ps_count", lambda: 2)
    with pytest.raises(ValueError, match=r"the partitioner of emb \(shape \(10, 4\)\) gave partitions \[2, 2\]"):
        partitioned.sharding_partitions(lambda shape, dtype: [2, 2], "emb", [10, 4], tf.float32)
    with pytest.raises(ValueError, match="splits dimension 0 of .* into 12 parts: more parts than rows"):
        partitioned.sharding_partitions(lambda shape, dtype: [12, 1], "emb", [10, 4], tf.float32)
