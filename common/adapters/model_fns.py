"""A user's model_fn as the engine calls it: what TF1 and TF 2.x model_fns hand over besides the spec,
made the spec's named parts.

The engine calls a model_fn that returns an EstimatorSpec whose metrics keep
their own state and whose scalars are named (common.spec). A model_fn
written for tf.estimator also writes summaries (TF1's summary ops, TF 2's
tf.summary.*), returns (value, update_op) pairs of its own making, and
averages its weights with tf.train.ExponentialMovingAverage. `adapt` wraps
it so that, in each call, those become the spec's scalars, metrics and the
update the framework does after each step.
"""

import inspect

from common.adapters import metric_pairs, moving_averages, summaries
from common.spec.model_fn import EstimatorSpec, ModeKeys, call_with_wanted_args
from common.variables import registry


def adapt(model_fn):
    """The model_fn the Estimator hands the engine.

    Args:
      model_fn: the user's model_fn(features, labels, mode, params, config); all but `features` may be left
        out of its signature.
    Returns:
      model_fn(features, labels, mode, params, config) -> what the user's returns, its EstimatorSpec with:
      plain (value, update_op) pairs in eval_metric_ops as streaming metrics (common.adapters.metric_pairs);
      in a TRAIN call, the scalars written as summaries among its scalars (the spec's own win a clash).
      The call runs with TF 2's tf.summary recorded (common.adapters.summaries) and an
      ExponentialMovingAverage's apply following the step's update (common.adapters.moving_averages).
    Raises:
      ValueError: model_fn has no argument named `features`.
    """
    if "features" not in inspect.signature(model_fn).parameters:
        raise ValueError("model_fn must take an argument named 'features'")

    def adapted(features, labels=None, mode=None, params=None, config=None):
        with summaries.tf2_writes_recorded(), moving_averages.in_model_fn():
            spec = call_with_wanted_args(model_fn, {"features": features},
                                         {"labels": labels, "mode": mode, "params": params, "config": config})
            if not isinstance(spec, EstimatorSpec):
                return spec  # (the engine refuses it by name)
            if spec.eval_metric_ops:  # (made in the call's scope: metric state)
                spec = spec._replace(eval_metric_ops=metric_pairs.with_derived(spec.eval_metric_ops))
        record = registry.active_registry().call
        if record.scalars and mode == ModeKeys.TRAIN:  # a training call's scalar summaries are the spec's scalars
            spec = spec._replace(scalars={**summaries.scalars_of_call(record), **spec.scalars})
        return spec

    adapted.__name__ = getattr(model_fn, "__name__", "model_fn")
    adapted.__doc__ = model_fn.__doc__
    return adapted
