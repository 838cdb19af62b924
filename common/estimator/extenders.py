"""tf.estimator.add_metrics: an estimator whose evaluation also reports a metric_fn's metrics.

TF 2.x-era programs (and tf.contrib.estimator's before them) added an RMSE
to a premade regressor this way, without writing a model_fn.
"""

from common.estimator.estimator import Estimator
from common.spec.model_fn import ModeKeys, call_with_wanted_args, named_arguments

_METRIC_FN_ARGS = ("predictions", "features", "labels", "config")


def add_metrics(estimator, metric_fn):
    """A new Estimator over the same model dir, config and warm start whose EVAL spec also holds
    metric_fn(predictions[, features, labels, config])'s eval_metric_ops (a name given twice: metric_fn's)."""
    unexpected = sorted(set(named_arguments(metric_fn)) - set(_METRIC_FN_ARGS))
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {unexpected}; it may take "
                         f"{', '.join(_METRIC_FN_ARGS)}")
    model_fn = estimator.model_fn

    def model_fn_with_metrics(features, labels, mode, config):
        spec = model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        added = call_with_wanted_args(metric_fn, {}, {"predictions": spec.predictions, "features": features,
                                                      "labels": labels, "config": config})
        return spec._replace(eval_metric_ops={**(spec.eval_metric_ops or {}), **added})

    return Estimator(model_fn_with_metrics, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=estimator.warm_start_from)
