"""tf.compat.v1.estimator's premade estimators: the same models, TF1's default learning rates.

TF 1.x's DNN estimators gave a named optimizer a rate of 0.05 and its linear
ones min(0.2, 1/sqrt(columns)); TF 2.x's (common.canned) give 0.001 and 0.2.
Wide-and-deep and the baseline did not change.
"""

from common.canned import estimators


class DNNEstimator(estimators.DNNEstimator):
    rates = estimators.TF1_RATES


class DNNClassifier(estimators.DNNClassifier):
    rates = estimators.TF1_RATES


class DNNRegressor(estimators.DNNRegressor):
    rates = estimators.TF1_RATES


class LinearEstimator(estimators.LinearEstimator):
    rates = estimators.TF1_RATES


class LinearClassifier(estimators.LinearClassifier):
    rates = estimators.TF1_RATES


class LinearRegressor(estimators.LinearRegressor):
    rates = estimators.TF1_RATES
