"""tf.compat.v1.estimator's premade estimators: the same models, TF1's defaults.

TF 1.x's DNN estimators gave a named optimizer a rate of 0.05 and its linear
ones min(0.2, 1/sqrt(columns)); TF 2.x's (common.canned) give 0.001 and 0.2.
Its classifiers and regressors summed the loss over the batch
(loss_reduction SUM) where TF 2.x's average it, and its binary heads took
tf.compat.v1.metrics.auc's AUC (trapezoids, an epsilon in the rates). The
rates of wide-and-deep and the baseline did not change.
"""

import functools
import inspect

from common.canned import estimators, head_metrics, heads

# The variable scope each of TF1's estimators built in, its head's losses named under it ("linear/head/truediv").
_TF1_SCOPES = (("DNNLinearCombined", ""), ("DNN", "dnn/"), ("Linear", "linear/"), ("Baseline", "baseline/"))


def _tf1_flavour(cls):
    """cls with TF1's rates and summary tags; where it makes its head, TF1's default loss_reduction (SUM), AUC
    and training average_loss summary."""
    attributes = {"rates": estimators.TF1_RATES, "dnn_tag_prefix": "dnn/dnn/", "__module__": __name__,
                  "__doc__": f"tf.compat.v1.estimator.{cls.__name__}: TF1's defaults."}
    signature = inspect.signature(cls.__init__)
    tf1_scope = next((scope for prefix, scope in _TF1_SCOPES if cls.__name__.startswith(prefix)), "")
    if "loss_reduction" in signature.parameters:
        @functools.wraps(cls.__init__)
        def __init__(self, *args, **kwargs):
            bound = signature.bind(self, *args, **kwargs)
            bound.arguments.setdefault("loss_reduction", heads.SUM)
            cls.__init__(*bound.args, **bound.kwargs)
            self.head.train_average_loss = True  # (TF1's heads wrote a training average_loss summary)
            self.head.tf1_scope = tf1_scope
            if isinstance(self.head, heads.BinaryClassHead):
                self.head.auc_summation = head_metrics.TRAPEZOIDAL

        __init__.__signature__ = signature.replace(parameters=[
            p.replace(default=heads.SUM) if p.name == "loss_reduction" else p for p in signature.parameters.values()])
        attributes["__init__"] = __init__
    return type(cls.__name__, (cls,), attributes)


(DNNEstimator, DNNClassifier, DNNRegressor, LinearEstimator, LinearClassifier, LinearRegressor,
 DNNLinearCombinedClassifier, DNNLinearCombinedRegressor, BaselineClassifier, BaselineRegressor) = (
    _tf1_flavour(cls) for cls in (estimators.DNNEstimator, estimators.DNNClassifier, estimators.DNNRegressor,
                                  estimators.LinearEstimator, estimators.LinearClassifier,
                                  estimators.LinearRegressor, estimators.DNNLinearCombinedClassifier,
                                  estimators.DNNLinearCombinedRegressor, estimators.BaselineClassifier,
                                  estimators.BaselineRegressor))
