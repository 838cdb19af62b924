"""TPUEstimator's embedding_config_spec and the TPU embedding optimizers' parameters, off a TPU.

TPU recommenders declared their embedding tables to TPUEstimator
(EmbeddingConfigSpec: the TPU embedding columns, an optimizer's parameters
for them). With use_tpu=False, TF 2.15's TPUEstimator made nothing of the
spec: the columns read their tables as ordinary embedding columns, and the
model_fn's own optimizer trained them with the other variables. So here:
the spec is checked as TF 2.15 checked it and kept; the optimizer
parameters are kept for the program to read. TensorFlow 2.21 dropped these
names (tf.tpu.experimental.AdagradParameters & co.); the upgrade maps them
here.
"""

import collections

from common.internals import tensorflow_internals


class _OptimizationParameters:
    """An optimizer's parameters for TPU embeddings (tf.tpu.experimental.*Parameters): kept, unused off a TPU.

    Args:
      learning_rate: the learning rate TPU embeddings would have used.
      **settings: the optimizer's other settings, each kept as an attribute of that name.
    """

    def __init__(self, learning_rate, **settings):
        self.learning_rate = learning_rate
        self.__dict__.update(settings)

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.learning_rate!r})"


class AdagradParameters(_OptimizationParameters):
    """tf.tpu.experimental.AdagradParameters(learning_rate, initial_accumulator=0.1, ...)."""

    def __init__(self, learning_rate, initial_accumulator=0.1, **settings):
        super().__init__(learning_rate, initial_accumulator=initial_accumulator, **settings)


class AdamParameters(_OptimizationParameters):
    """tf.tpu.experimental.AdamParameters(learning_rate, beta1=0.9, beta2=0.999, epsilon=1e-08, ...)."""

    def __init__(self, learning_rate, beta1=0.9, beta2=0.999, epsilon=1e-08, **settings):
        super().__init__(learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon, **settings)


class StochasticGradientDescentParameters(_OptimizationParameters):
    """tf.tpu.experimental.StochasticGradientDescentParameters(learning_rate, ...)."""


class FtrlParameters(_OptimizationParameters):
    """tf.tpu.experimental.FtrlParameters(learning_rate, ...)."""


class MomentumParameters(_OptimizationParameters):
    """tf.tpu.experimental.MomentumParameters(learning_rate, momentum, ...)."""


class RMSPropParameters(_OptimizationParameters):
    """tf.tpu.experimental.RMSPropParameters(learning_rate, rho, momentum, epsilon, ...)."""


class ProximalAdagradParameters(_OptimizationParameters):
    """tf.tpu.experimental.ProximalAdagradParameters(learning_rate, ...)."""


_SPEC_FIELDS = ("feature_columns", "optimization_parameters", "clipping_limit",
                "pipeline_execution_with_tensor_core", "experimental_gradient_multiplier_fn",
                "feature_to_config_dict", "table_to_config_dict", "partition_strategy", "profile_data_directory")


class EmbeddingConfigSpec(collections.namedtuple("EmbeddingConfigSpec", _SPEC_FIELDS)):
    """tf.estimator.tpu.experimental.EmbeddingConfigSpec, checked as TF 2.15 checked it (see the module).

    Raises:
      ValueError: neither or both of feature_columns and the two config dicts, a partition_strategy other than
        "div" or "mod", or optimization_parameters that are not one of the *Parameters here.
      TypeError: a feature column that is not an embedding column (TPU or not).
    """

    def __new__(cls, feature_columns=None, optimization_parameters=None, clipping_limit=None,
                pipeline_execution_with_tensor_core=False, experimental_gradient_multiplier_fn=None,
                feature_to_config_dict=None, table_to_config_dict=None, partition_strategy="div",
                profile_data_directory=None):
        dicts = bool(feature_to_config_dict and table_to_config_dict)
        if bool(feature_columns) == dicts:
            raise ValueError("EmbeddingConfigSpec: give exactly one of feature_columns and the pair "
                             "feature_to_config_dict and table_to_config_dict")
        if partition_strategy not in ("div", "mod"):
            raise ValueError(f"EmbeddingConfigSpec(partition_strategy={partition_strategy!r}): 'div' or 'mod'")
        if feature_columns:
            columns = tensorflow_internals.feature_columns
            for column in feature_columns:
                if not isinstance(column, (columns.EmbeddingColumn, columns.SharedEmbeddingColumn)):
                    raise TypeError(f"EmbeddingConfigSpec: feature column {getattr(column, 'name', column)!r} is a "
                                    f"{type(column).__name__}; TPU embeddings take tf.tpu.experimental."
                                    "embedding_column and shared_embedding_columns")
            if not isinstance(optimization_parameters, _OptimizationParameters):
                raise ValueError("EmbeddingConfigSpec: optimization_parameters must be one of AdagradParameters, "
                                 "AdamParameters, StochasticGradientDescentParameters, ..., got "
                                 f"{type(optimization_parameters).__name__}")
        return super().__new__(cls, feature_columns, optimization_parameters, clipping_limit,
                               pipeline_execution_with_tensor_core, experimental_gradient_multiplier_fn,
                               feature_to_config_dict, table_to_config_dict, partition_strategy,
                               profile_data_directory)
