"""tf.estimator.add_metrics and tf.contrib.estimator.forward_features: a premade estimator extended
without writing a model_fn.

TF 2.x-era programs (and tf.contrib.estimator's before them) added an RMSE
to a premade regressor with add_metrics, and TF1 programs passed a key
feature through to the predictions and the served outputs with
forward_features (training-data-analyst's babyweight).
"""

import collections.abc

import tensorflow as tf

from common.estimator.estimator import Estimator
from common.spec.export_outputs import PredictOutput
from common.spec.model_fn import ModeKeys, call_with_wanted_args, named_arguments

_METRIC_FN_ARGS = ("predictions", "features", "labels", "config")


def add_metrics(estimator, metric_fn):
    """An Estimator with more evaluation metrics, as tf.estimator.add_metrics: a premade one extended without
    writing a model_fn.

    Args:
      estimator: the Estimator to extend.
      metric_fn: metric_fn(predictions[, features, labels, config]) -> {name: metric}, its arguments named as
        these; its metrics join the EVAL spec's (a name given twice: metric_fn's).
    Returns:
      A new Estimator over the same model dir, config and warm start.
    Raises:
      ValueError: metric_fn takes an argument other than those.
      TypeError: (at evaluation) metric_fn returned something other than a dict.
      ValueError: (at evaluation) metric_fn gave a Keras metric a tensor of unknown rank, naming metric_fn.
    """
    unexpected = sorted(set(named_arguments(metric_fn)) - set(_METRIC_FN_ARGS))
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {unexpected}; it may take "
                         f"{', '.join(_METRIC_FN_ARGS)}")
    model_fn = estimator.model_fn

    def model_fn_with_metrics(features, labels, mode, config):
        spec = model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        try:
            added = call_with_wanted_args(metric_fn, {}, {"predictions": spec.predictions, "features": features,
                                                          "labels": labels, "config": config})
        except ValueError as error:
            if "length of shape with unknown rank" not in str(error):  # (Keras 3's squeeze_or_expand_to_same_rank)
                raise
            raise ValueError(  # (Keras 2's metrics took such a tensor: programs squeezed without an axis)
                f"add_metrics: metric_fn ({getattr(metric_fn, '__name__', metric_fn)}) gave a Keras metric a tensor "
                f"of unknown rank ({str(error).splitlines()[0]}): Keras 3's metrics need the rank known, where Keras "
                "2's did not. A tf.squeeze without an axis over a batch of unknown size gives such a tensor: name "
                "the axis (tf.squeeze(t, axis=1)) or tf.reshape it to the rank meant") from error
        if not isinstance(added, collections.abc.Mapping):
            raise TypeError(f"add_metrics: metric_fn ({getattr(metric_fn, '__name__', metric_fn)}) returned a "
                            f"{type(added).__name__}; it must return a dict {{name: metric}}, each metric a Keras "
                            "metric or a (value, update_op) pair such as tf.compat.v1.metrics.mean(...)'s")
        return spec._replace(eval_metric_ops={**(spec.eval_metric_ops or {}), **added})

    return _with_model_fn(estimator, model_fn_with_metrics)


def forward_features(estimator, keys=None, sparse_default_values=None):
    """An Estimator whose predictions (and served PredictOutputs) also hold some features, as
    tf.contrib.estimator.forward_features: a key passed through to the output.

    Args:
      estimator: the Estimator to extend.
      keys: the features to forward: a name, a list, or None: all.
      sparse_default_values: {key: value} that makes a sparse feature dense (default 0, or "" for text).
    Returns:
      A new Estimator over the same model dir, config and warm start; its PREDICT calls raise ValueError when
      features or predictions are not dicts, a key is not a feature, or a key is already a prediction.
    """
    model_fn = estimator.model_fn
    wanted = [keys] if isinstance(keys, str) else keys
    defaults = sparse_default_values or {}

    def model_fn_forwarding(features, labels, mode, config):
        spec = model_fn(features, labels, mode, config)
        if mode != ModeKeys.PREDICT:
            return spec
        if not isinstance(features, dict) or not isinstance(spec.predictions, dict):
            raise ValueError("forward_features: features and predictions must be dicts, got "
                             f"{type(features).__name__} and {type(spec.predictions).__name__}")
        forwarded = {}
        for key in features if wanted is None else wanted:
            if key not in features:
                raise ValueError(f"Key ({key}) is not in features.")
            if key in spec.predictions:
                raise ValueError(f"Cannot forward feature key ({key}). Since it does exist in predictions.")
            value = features[key]
            if isinstance(value, tf.SparseTensor):
                value = tf.sparse.to_dense(value, default_value=defaults.get(key, "" if value.dtype == tf.string
                                                                                  else 0))
            forwarded[key] = value
        predictions = {**spec.predictions, **forwarded}
        outputs = {name: PredictOutput(predictions) if isinstance(output, PredictOutput) else output
                   for name, output in (spec.export_outputs or {}).items()}
        return spec._replace(predictions=predictions, export_outputs=outputs or None)

    return _with_model_fn(estimator, model_fn_forwarding)


def _with_model_fn(estimator, model_fn):
    return Estimator(model_fn, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=estimator.warm_start_from)
