"""input_fn's dataset, checked per mode, and the per-tower signature model_fn is probed with."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.engine import inputs
from common.spec.model_fn import ModeKeys

X = np.arange(24, dtype=np.float32).reshape(12, 2)
Y = np.arange(12, dtype=np.int64)


def pairs():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4, drop_remainder=True)


def test_input_fn_gets_the_arguments_it_names_and_predict_drops_labels():
    seen = {}

    def input_fn(mode, params):
        seen.update(mode=mode, params=params)
        return pairs()

    dataset = inputs.dataset_for(input_fn, ModeKeys.PREDICT, {"params": {"a": 1}, "config": None})
    assert seen == {"mode": ModeKeys.PREDICT, "params": {"a": 1}}
    assert isinstance(dataset.element_spec, dict)  # features alone
    assert inputs.global_batch_size(dataset) == 4


def test_what_an_input_fn_must_give_is_said_by_name():
    with pytest.raises(TypeError, match="input_fn for train must return a tf.data.Dataset, or features and labels "
                                        "as tensors; it returned a list holding object"):
        inputs.dataset_for(lambda: [object(), 2], ModeKeys.TRAIN, {})
    with pytest.raises(ValueError, match="input_fn for train must yield \\(features, labels\\) pairs or features "
                                         "alone, got a tuple of 3"):
        inputs.dataset_for(lambda: tf.data.Dataset.from_tensor_slices((X, X, X)), ModeKeys.TRAIN, {})


def test_features_alone_come_with_labels_none_and_a_list_pair_is_features_and_labels():
    features_only = inputs.dataset_for(lambda: tf.data.Dataset.from_tensor_slices(X), ModeKeys.EVAL, {})
    features, labels = next(iter(features_only))
    assert labels is None and features.shape == X.shape[1:]
    listed = inputs.dataset_for(lambda: [tf.constant(X), tf.constant([1, 2, 3])], ModeKeys.TRAIN, {})
    features, labels = next(iter(listed))
    assert features.shape == X.shape and labels.numpy().tolist() == [1, 2, 3]


def test_the_probe_signature_leaves_the_batch_size_open():
    signature = inputs.shard_signature(pairs())
    assert signature[0]["x"].shape.as_list() == [None, 2] and signature[1].shape.as_list() == [None]


def test_replica_batches_are_merged_for_the_towers_a_step_splits():
    merged = inputs.merge_replica_batches(pairs(), 2)
    sizes = [int(tf.shape(labels)[0]) for _, labels in merged]
    assert sizes == [8, 4]
    assert np.concatenate([labels.numpy() for _, labels in merged]).tolist() == list(range(12))


def test_each_host_reads_its_share_unless_the_input_fn_shards_itself():
    config = common.RunConfig()
    assert not inputs.takes_input_context(lambda mode: None)
    assert inputs.takes_input_context(lambda input_context: None)
    context = inputs.input_context(config.cluster, 2)
    assert (context.num_input_pipelines, context.input_pipeline_id, context.num_replicas_in_sync) == (1, 0, 2)
    dataset = inputs.dataset_for_run(lambda: pairs(), ModeKeys.TRAIN, {}, config)
    assert sum(1 for _ in dataset) == 3
