"""What input_fn gives the Estimator: a checked tf.data.Dataset per mode."""

import tensorflow as tf

from common.spec import ModeKeys, call_with_wanted_args


def dataset_for(input_fn, mode, optional_args):
    """input_fn's dataset; optional_args (params, mode, config) are passed
    when its signature names them. TRAIN and EVAL need (features, labels)
    pairs; PREDICT drops labels when the dataset has them."""
    dataset = call_with_wanted_args(input_fn, {}, dict(optional_args, mode=mode))
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"input_fn must return a tf.data.Dataset, got {type(dataset).__name__}")
    spec = dataset.element_spec
    has_labels = isinstance(spec, tuple) and len(spec) == 2
    if mode != ModeKeys.PREDICT and not has_labels:
        raise ValueError(f"input_fn for {mode} must yield (features, labels) pairs, got {spec}")
    if mode == ModeKeys.PREDICT and has_labels:
        dataset = dataset.map(lambda features, labels: features)
    return dataset


def _batchless(spec):
    """A per-tower shard's spec: the batch dimension unknown."""
    if spec.shape.rank:
        return tf.TensorSpec([None] + spec.shape.as_list()[1:], spec.dtype)
    return spec


def shard_signature(dataset):
    """The signature model_fn is probed with: the dataset's element, batch size unknown."""
    return tf.nest.map_structure(_batchless, dataset.element_spec)
