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
    with pytest.raises(TypeError, match="input_fn for train must return a tf.data.Dataset, it returned a list"):
        inputs.dataset_for(lambda: [object(), 2], ModeKeys.TRAIN, {})  # (TF1's forms: common.adapters)
    with pytest.raises(ValueError, match="input_fn for train must yield \\(features, labels\\) pairs or features "
                                         "alone, got a tuple of 3"):
        inputs.dataset_for(lambda: tf.data.Dataset.from_tensor_slices((X, X, X)), ModeKeys.TRAIN, {})


def test_features_alone_come_with_labels_none():
    features_only = inputs.dataset_for(lambda: tf.data.Dataset.from_tensor_slices(X), ModeKeys.EVAL, {})
    features, labels = next(iter(features_only))
    assert labels is None and features.shape == X.shape[1:]
    one = inputs.dataset_for(lambda: tf.data.Dataset.from_tensor_slices((X,)), ModeKeys.PREDICT, {})
    assert next(iter(one)).shape == X.shape[1:]  # (features,): TensorFlow up to 1.8 read its first item


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
    assert not inputs.DatasetSource.of_input_fn(lambda mode: None).shards_itself
    assert inputs.DatasetSource.of_input_fn(lambda input_context: None).shards_itself
    context = inputs.input_context(config.cluster, 2)
    assert (context.num_input_pipelines, context.input_pipeline_id, context.num_replicas_in_sync) == (1, 0, 2)
    dataset = inputs.dataset_for_run(lambda: pairs(), ModeKeys.TRAIN, {}, config)
    assert sum(1 for _ in dataset) == 3


def _autotuned_pairs(enabled):
    dataset = pairs().map(lambda features, labels: (features, labels + 1), num_parallel_calls=tf.data.AUTOTUNE)
    if enabled is None:
        return dataset
    options = tf.data.Options()
    options.autotune.enabled = enabled
    return dataset.with_options(options)


@pytest.mark.parametrize("set_by_input_fn,runs_with", [(None, False), (True, True), (False, False)])
def test_autotuning_is_off_unless_the_input_fn_set_it(set_by_input_fn, runs_with):
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
        dataset = inputs.dataset_for_run(lambda: _autotuned_pairs(set_by_input_fn), mode, {}, common.RunConfig())
        assert dataset.options().autotune.enabled is runs_with
    train = inputs.dataset_for_run(lambda: _autotuned_pairs(set_by_input_fn), ModeKeys.TRAIN, {}, common.RunConfig())
    labels = np.concatenate([labels.numpy() for _, labels in train])
    assert labels.tolist() == list(range(1, 13))  # the AUTOTUNE map still runs, in order


def _casting_fn(features, labels, mode):
    """A model_fn that casts labels and a feature as numbers (as many do), whatever input_fn gave."""
    net = common.get_module("net", lambda: tf.keras.layers.Dense(3, name="logits"))
    x = features["x"] * tf.cast(features["scale"], tf.float32)[:, None]
    words = tf.cast(tf.strings.length(features["comment"]), tf.float32)[:, None] * 0.0  # (a string read as one)
    logits = net(x + words)
    ids = tf.cast(labels, tf.int64)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ids, logits=logits))
    return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(
        lambda: tf.keras.optimizers.SGD(0.1)))


def _strings_input(string_labels, string_scale):
    x = np.ones((8, 2), np.float32)
    labels = np.array(["0", "1"] * 4) if string_labels else np.array([0, 1] * 4)
    scale = np.array(["1"] * 8) if string_scale else np.ones(8, np.float32)
    comment = np.array(["an innocent string feature model_fn reads as a string"] * 8)
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x, "scale": scale, "comment": comment}, labels)).batch(4)


@pytest.mark.parametrize("string_labels,string_scale,named", [
    (True, False, "the labels input_fn gives are strings (dtype string), and model_fn uses them as numbers: "
                  "Cast string to int64 is not supported"),
    (False, True, "the feature(s) 'scale' input_fn gives are strings (dtype string), and model_fn uses them as "
                  "numbers: Cast string to float is not supported")])  # (not 'comment', read as a string)
def test_strings_a_model_fn_uses_as_numbers_are_named_as_labels_or_feature_keys(
        tmp_path, string_labels, string_scale, named):
    est = common.Estimator(_casting_fn, str(tmp_path))
    with pytest.raises(TypeError) as refused:
        est.train(_strings_input(string_labels, string_scale), steps=2)
    assert str(refused.value).startswith(named)
    est.train(_strings_input(False, False), steps=2)  # the model dir is fine for the right input
    assert est.get_variable_value("global_step") == 2


def test_with_autotuning_off_a_pipeline_still_ends_in_a_prefetch():
    mapped = inputs.steady_autotuning(pairs().map(lambda features, labels: (features, labels)))
    assert type(mapped._input_dataset).__name__ == "_PrefetchDataset"  # tf.data's own would have been injected
    prefetched = pairs().prefetch(2)
    assert inputs.steady_autotuning(prefetched)._input_dataset is prefetched  # one of its own is kept, alone
