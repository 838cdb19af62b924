"""tf.compat.v1.estimator's premade estimators: the same models, TF1's default learning rates.

TF 1.x's DNN estimators gave a named optimizer a rate of 0.05 and its linear
ones min(0.2, 1/sqrt(columns)); TF 2.x's (common.canned) give 0.001 and 0.2.
Wide-and-deep and the baseline did not change.
"""

from common.canned import estimators


def _tf1_flavour(cls):
    return type(cls.__name__, (cls,), {"rates": estimators.TF1_RATES, "__module__": __name__,
                                       "__doc__": f"tf.compat.v1.estimator.{cls.__name__}: TF1's default rates."})


DNNEstimator, DNNClassifier, DNNRegressor, LinearEstimator, LinearClassifier, LinearRegressor = (
    _tf1_flavour(cls) for cls in (estimators.DNNEstimator, estimators.DNNClassifier, estimators.DNNRegressor,
                                  estimators.LinearEstimator, estimators.LinearClassifier,
                                  estimators.LinearRegressor))
