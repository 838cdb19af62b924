"""The premade estimators: tf.estimator 2.15's constructors, defaults and checkpoint names, on the towers.

Each is an Estimator whose model_fn sums its networks' logits (DNN, linear,
both, or a bias) under a head (binary or multi-class classification,
regression, or one given). Default optimizers as tf.estimator 2.15's
(`LearningRates`): Adagrad at 0.001 for a DNN (Keras's default rate: the
TF 2.x DNN estimators passed none), Ftrl at 0.2 for a linear model; in
wide-and-deep, Adagrad at 0.001 and Ftrl at min(0.005, 1/sqrt(linear
columns)); Ftrl at 0.3 for the baseline. tf.compat.v1.estimator's classes
(common.canned.v1) had Adagrad at 0.05 and Ftrl at min(0.2, 1/sqrt(columns)).
Their partitioners (input_layer_partitioner, partitioner; by default TF1's
min_max_variable_partitioner over the ps tasks, parts of 64 MiB at least) split
the embeddings and linear weights over a parameter-server job's ps tasks, as
in TF1 (common.tf1_runtime.partitioned); on one host each variable is whole.
"""

import dataclasses
import functools
import math

import tensorflow as tf

from common.canned import heads, networks
from common.canned.model_fns import Network, model_fn_of
from common.estimator.estimator import Estimator

SUM_OVER_BATCH_SIZE = heads.SUM_OVER_BATCH_SIZE


@dataclasses.dataclass(frozen=True)
class LearningRates:
    """The rates an optimizer given by name gets: dnn alone, linear alone (of the number of columns)."""

    dnn: float
    linear: object  # number of columns -> rate


TF2_RATES = LearningRates(dnn=0.001, linear=lambda columns: 0.2)
TF1_RATES = LearningRates(dnn=0.05, linear=lambda columns: min(0.2, 1.0 / math.sqrt(columns)))


def _columns(feature_columns, what):
    columns = list(feature_columns or ())
    if not columns:
        raise ValueError(f"{what} is empty: give the feature columns the model reads")
    return columns


def _hidden_units(hidden_units, what="hidden_units"):
    units = list(hidden_units or ())
    if not units or not all(isinstance(u, int) and u > 0 for u in units):
        raise ValueError(f"{what} must be a non-empty list of positive ints, got {hidden_units!r}")
    return units


def dnn_network(hidden_units, feature_columns, optimizer, activation_fn, dropout, batch_norm, learning_rate,
                tag_prefix="dnn/", input_layer_partitioner=None):
    if dropout is not None and not 0 <= dropout < 1:
        raise ValueError(f"dropout={dropout}: a probability in [0, 1)")
    units, columns = _hidden_units(hidden_units), _columns(feature_columns, "feature_columns")
    return Network(lambda features, mode, logits_dimension: networks.dnn_logits(
        features, mode, logits_dimension, units, columns, activation_fn, dropout, batch_norm, tag_prefix,
        input_layer_partitioner), optimizer, learning_rate)


def linear_network(feature_columns, optimizer, sparse_combiner, learning_rate_of, wide_part=False,
                   partitioner=None):
    columns = _columns(feature_columns, "feature_columns")
    return Network(lambda features, mode, logits_dimension: networks.linear_logits(
        features, logits_dimension, columns, sparse_combiner, summarize_logits=wide_part, partitioner=partitioner),
        optimizer, learning_rate_of(len(columns)))


def baseline_network(optimizer="Ftrl"):
    return Network(lambda features, mode, logits_dimension: networks.baseline_logits(features, logits_dimension),
                   optimizer, 0.3)


class _Premade(Estimator):
    rates = TF2_RATES
    dnn_tag_prefix = "dnn/"  # where a DNN's layer summaries are tagged (tf.compat.v1's: "dnn/dnn/")

    def __init__(self, head, network_list, model_dir, config, warm_start_from):
        self.head = head
        super().__init__(model_fn_of(head, network_list), model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNEstimator(_Premade):
    def __init__(self, head, hidden_units, feature_columns, model_dir=None, optimizer="Adagrad",
                 activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, batch_norm=False):
        super().__init__(head, [dnn_network(hidden_units, feature_columns, optimizer, activation_fn, dropout,
                                            batch_norm, self.rates.dnn, self.dnn_tag_prefix,
                                            input_layer_partitioner)], model_dir, config, warm_start_from)


class DNNClassifier(DNNEstimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Adagrad", activation_fn=tf.nn.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, batch_norm=False):
        super().__init__(heads.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction),
                         hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
                         input_layer_partitioner, config, warm_start_from, batch_norm)


class DNNRegressor(DNNEstimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Adagrad", activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=SUM_OVER_BATCH_SIZE, batch_norm=False):
        super().__init__(heads.RegressionHead(label_dimension, weight_column, loss_reduction), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout, input_layer_partitioner,
                         config, warm_start_from, batch_norm)


class LinearEstimator(_Premade):
    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl", config=None, partitioner=None,
                 sparse_combiner="sum", warm_start_from=None):
        super().__init__(head, [linear_network(feature_columns, optimizer, sparse_combiner, self.rates.linear,
                                               partitioner=partitioner)], model_dir, config, warm_start_from)


class LinearClassifier(_Premade):
    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, sparse_combiner="sum"):
        super().__init__(heads.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction),
                         [linear_network(feature_columns, optimizer, sparse_combiner, self.rates.linear,
                                         partitioner=partitioner)], model_dir, config, warm_start_from)


class LinearRegressor(_Premade):
    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl",
                 config=None, partitioner=None, warm_start_from=None, loss_reduction=SUM_OVER_BATCH_SIZE,
                 sparse_combiner="sum"):
        super().__init__(heads.RegressionHead(label_dimension, weight_column, loss_reduction),
                         [linear_network(feature_columns, optimizer, sparse_combiner, self.rates.linear,
                                         partitioner=partitioner)], model_dir, config, warm_start_from)


def _wide_and_deep(linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                   dnn_activation_fn, dnn_dropout, batch_norm, linear_sparse_combiner, input_layer_partitioner):
    """The linear (wide) and DNN (deep) networks of wide-and-deep, either one absent without its columns; the
    input layer's partitioner serves the linear weights too, as in TF1."""
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    linear = deep = None
    if linear_feature_columns:
        linear = linear_network(linear_feature_columns, linear_optimizer, linear_sparse_combiner,
                                lambda columns: min(0.005, 1.0 / math.sqrt(columns)), wide_part=True,
                                partitioner=input_layer_partitioner)
    if dnn_feature_columns:
        _hidden_units(dnn_hidden_units, "dnn_hidden_units")
        deep = dnn_network(dnn_hidden_units, dnn_feature_columns, dnn_optimizer, dnn_activation_fn, dnn_dropout,
                           batch_norm, learning_rate=0.001, input_layer_partitioner=input_layer_partitioner)
    return [deep, linear]


class DNNLinearCombinedEstimator(_Premade):
    def __init__(self, head, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, input_layer_partitioner=None, config=None,
                 batch_norm=False, linear_sparse_combiner="sum", warm_start_from=None):
        super().__init__(head, _wide_and_deep(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                                              dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                              batch_norm, linear_sparse_combiner, input_layer_partitioner),
                         model_dir, config, warm_start_from)


class DNNLinearCombinedClassifier(_Premade):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, batch_norm=False, linear_sparse_combiner="sum"):
        super().__init__(heads.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction),
                         _wide_and_deep(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                                        dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                        batch_norm, linear_sparse_combiner, input_layer_partitioner), model_dir,
                         config, warm_start_from)


class DNNLinearCombinedRegressor(_Premade):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension=1, weight_column=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, batch_norm=False, linear_sparse_combiner="sum"):
        super().__init__(heads.RegressionHead(label_dimension, weight_column, loss_reduction),
                         _wide_and_deep(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                                        dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                        batch_norm, linear_sparse_combiner, input_layer_partitioner), model_dir,
                         config, warm_start_from)


class BaselineEstimator(_Premade):
    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        super().__init__(head, [baseline_network(optimizer)], model_dir, config, None)


class BaselineClassifier(_Premade):
    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None, optimizer="Ftrl",
                 config=None, loss_reduction=SUM_OVER_BATCH_SIZE):
        super().__init__(heads.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction),
                         [baseline_network(optimizer)], model_dir, config, None)


class BaselineRegressor(_Premade):
    def __init__(self, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl", config=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE):
        super().__init__(heads.RegressionHead(label_dimension, weight_column, loss_reduction),
                         [baseline_network(optimizer)], model_dir, config, None)


def _refused(name, *args, **kwargs):
    raise NotImplementedError(
        f"{name}: TensorFlow 2.21 no longer has the boosted-trees kernels tf.estimator's {name} ran on. Train "
        "gradient boosted trees with YDF (pip install ydf; ydf.GradientBoostedTreesLearner) or TensorFlow "
        "Decision Forests (tensorflow_decision_forests.keras.GradientBoostedTreesModel), or use "
        "DNNLinearCombinedClassifier here.")


BoostedTreesClassifier = functools.partial(_refused, "BoostedTreesClassifier")
BoostedTreesRegressor = functools.partial(_refused, "BoostedTreesRegressor")
BoostedTreesEstimator = functools.partial(_refused, "BoostedTreesEstimator")
boosted_trees_classifier_train_in_memory = functools.partial(_refused, "boosted_trees_classifier_train_in_memory")
boosted_trees_regressor_train_in_memory = functools.partial(_refused, "boosted_trees_regressor_train_in_memory")
