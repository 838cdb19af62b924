"""Premade estimators on feature columns, as tf.estimator had them.

`estimators` (DNN, linear, wide-and-deep and baseline classifiers,
regressors and head-taking estimators; boosted trees refused by name),
`v1` (tf.compat.v1.estimator's, with TF1's default learning rates),
`heads` (binary, multi-class and regression heads: loss, predictions,
metrics, export outputs), `multi_label_head`, `networks` (the logits, under tf.estimator's
variable names), `model_fns` (the model_fn over networks and a head),
`optimizers` (an optimizer given by name, instance or callable).
"""

from common.canned.estimators import (  # noqa: F401
                                      BaselineClassifier,
                                      BaselineEstimator,
                                      BaselineRegressor,
                                      BoostedTreesClassifier,
                                      BoostedTreesEstimator,
                                      BoostedTreesRegressor,
                                      DNNClassifier,
                                      DNNEstimator,
                                      DNNLinearCombinedClassifier,
                                      DNNLinearCombinedEstimator,
                                      DNNLinearCombinedRegressor,
                                      DNNRegressor,
                                      LinearClassifier,
                                      LinearEstimator,
                                      LinearRegressor,
                                      boosted_trees_classifier_train_in_memory,
                                      boosted_trees_regressor_train_in_memory,
)
from common.canned.heads import BinaryClassHead, MultiClassHead, RegressionHead  # noqa: F401
from common.canned.multi_label_head import MultiLabelHead  # noqa: F401
