"""`model_to_estimator`: a compiled Keras model as an Estimator on towers.

As tf.keras.estimator.model_to_estimator did: the model's compiled loss
(plus its regularization losses) is trained by a copy of its compiled
optimizer (a TF1 optimizer given to compile(), which Keras 2 took, is
trained with as it is: TFOptimizer), its compiled metrics and the loss are evaluated, predictions
are keyed by the model's output names, and the export serves them. The
Estimator trains a copy of the model that starts from its current weights
(a checkpoint in model_dir, when there is one, replaces them): the copy's
variables are placed by the device plan, and its layers, where Keras named
them, are named afresh ("dense", not "dense_7"), so checkpoint names do not
depend on what else the process built before.
"""

import collections
import re

import keras
import numpy as np
import tensorflow as tf

from common.estimator.estimator import Estimator
from common.spec.model_fn import EstimatorSpec, ModeKeys
from common.variables import registry

MODULE_NAME = "keras_model"


def _metric_ids(compile_config):
    metrics = compile_config.get("metrics") or []
    if isinstance(metrics, dict):
        raise ValueError("model_to_estimator: metrics given per output (a dict) are not supported; "
                         "give a list of metrics")
    return [keras.metrics.deserialize(m) if isinstance(m, dict) else m for m in metrics]


def _auto_named(obj):
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", type(obj).__name__).lower()
    return re.fullmatch(rf"{snake}(_\d+)?", obj.name) is not None


def _clone_layer(layer):
    config = layer.get_config()
    if _auto_named(layer):
        config.pop("name", None)
    return type(layer).from_config(config)


def _copy_of(model, loss_weights):
    """The model rebuilt with its current weights as initial values (matched
    by name in model order, as layers build in it; shapes checked), compiled with its loss; a model Keras
    cannot clone (a subclassed one) is used itself."""
    pending = collections.defaultdict(collections.deque)  # variable name -> (path, value), in model order
    with tf.init_scope():  # all its variables, a Dropout's seed-generator state among them
        for variable in model.variables:
            pending[variable.name].append((variable.path, np.asarray(variable.numpy())))

    def from_original(next_creator, **kwargs):
        name = (kwargs.get("name") or "").split(":")[0]
        path, value = pending[name].popleft() if pending[name] else (name, None)
        if value is None or tuple(value.shape) != tuple(kwargs.get("shape") or value.shape):
            raise ValueError(f"model_to_estimator: the copy of {model.name!r} does not match it at {path!r}")
        kwargs["initial_value"] = value
        return next_creator(**kwargs)

    saved = model.name, model.compiled
    if _auto_named(model):
        model.name = re.sub(r"_\d+$", "", model.name)
    model.compiled = False  # clone_model would serialize the optimizer, which reads its variables eagerly
    try:
        with tf.variable_creator_scope(from_original):
            copy = keras.models.clone_model(model, clone_function=_clone_layer)
    except ValueError as error:
        if "subclass" not in str(error).lower():
            raise
        return model
    finally:
        model.name, model.compiled = saved
    copy.compile(optimizer=model.optimizer, loss=model.loss, loss_weights=loss_weights)
    return copy


def _model_inputs(model, features):
    if isinstance(features, dict) and len(features) == 1 and len(model.inputs or [None]) == 1:
        return next(iter(features.values()))
    return features


def _output_names(model, outputs):
    """The names predictions and the export are keyed by: Keras 2's output names, its output layers' names
    ("dense_2" for a Sequential ending in that layer), as tf.estimator keyed them."""
    names = list(getattr(model, "output_names", None) or [])
    if not names and isinstance(model, keras.Sequential) and model.layers:  # (Keras 3's has no output_names)
        names = [model.layers[-1].name]
    count = len(outputs) if isinstance(outputs, (list, tuple)) else 1
    return names if len(names) == count else (["output"] if count == 1 else [f"output_{i}" for i in range(count)])


def _model_fn(keras_model, metric_names_map):
    """model_fn over a copy of keras_model; what needs reading eagerly is read here, before any trace."""
    tf1_optimizer = getattr(keras_model.optimizer, "tf1_optimizer", None)
    optimizer_config = None if tf1_optimizer else keras.optimizers.serialize(keras_model.optimizer)
    compile_config = keras_model.get_compile_config()
    metric_ids = _metric_ids(compile_config)

    def model_fn(features, labels, mode):
        model = registry.get_module(MODULE_NAME, lambda: _copy_of(keras_model, compile_config.get("loss_weights")))
        inputs = _model_inputs(model, features)
        outputs = model(inputs, training=mode == ModeKeys.TRAIN)
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        predictions = dict(zip(_output_names(model, outputs), flat))
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions)
        loss = model.compute_loss(x=inputs, y=labels, y_pred=outputs, training=mode == ModeKeys.TRAIN)
        eval_metric_ops = {}
        if mode == ModeKeys.EVAL:
            for identifier in metric_ids:
                metric = _get_metric(identifier, labels, outputs)
                metric.update_state(labels, outputs)
                name = identifier if isinstance(identifier, str) else metric.name  # compile(metrics=["mae"]): "mae"
                eval_metric_ops[metric_names_map.get(name, name)] = metric
        if tf1_optimizer is not None:
            train_op = tf1_optimizer.minimize(
                loss, global_step=registry.get_global_step(),
                var_list=[registry.tf_variable(v) for v in model.trainable_variables]) if mode == ModeKeys.TRAIN \
                else None
            return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=eval_metric_ops,
                                 train_op=train_op)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, eval_metric_ops=eval_metric_ops,
                             optimizer=registry.get_optimizer(lambda: keras.optimizers.deserialize(optimizer_config)))

    return model_fn


def _get_metric(identifier, labels, outputs):
    """The metric compile(metrics=[...]) named, as Keras chooses it: "accuracy"
    is binary, sparse categorical or categorical by the labels' and outputs'
    shapes; a function is wrapped in a mean; the name is the one given."""
    if str(identifier).lower() in ("accuracy", "acc"):
        binary = outputs.shape[-1] == 1
        sparse = labels.shape.rank < outputs.shape.rank or (labels.shape[-1] == 1 and outputs.shape[-1] > 1)
        kind = (keras.metrics.BinaryAccuracy if binary else
                keras.metrics.SparseCategoricalAccuracy if sparse else keras.metrics.CategoricalAccuracy)
        return kind(name=str(identifier))
    metric = keras.metrics.get(identifier)
    if not isinstance(metric, keras.metrics.Metric):
        metric = keras.metrics.MeanMetricWrapper(metric, name=identifier if isinstance(identifier, str)
                                                 else metric.__name__)
    return metric


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None, model_dir=None, config=None,
                       checkpoint_format=None, metric_names_map=None, export_outputs=None):
    """An Estimator that trains, evaluates, predicts with and exports a compiled Keras model, as
    tf.keras.estimator.model_to_estimator did (see the module).

    Args:
      keras_model: a compiled Keras model (its optimizer may be a TF1 optimizer given to compile()).
      keras_model_path: or the path of a saved one (keras.models.load_model).
      custom_objects: for load_model, the custom objects of the saved model.
      model_dir: the Estimator's model dir.
      config: a RunConfig.
      checkpoint_format: accepted for tf.keras.estimator's signature; checkpoints here are TF2 checkpoints.
      metric_names_map: {the compiled metric's name: the name the evaluation reports}.
      export_outputs: not supported (the export serves the model's outputs by name): refused.
    Returns:
      The Estimator; its model_fn trains a copy of the model, which starts from the model's current weights.
    Raises:
      ValueError: export_outputs is given; neither or both of keras_model and keras_model_path; the model is
        not compiled.
    """
    del checkpoint_format
    if export_outputs is not None:
        raise ValueError("model_to_estimator(export_outputs=...) is not supported: the export serves the model's "
                         "outputs by name; write a model_fn with EstimatorSpec(export_outputs=...) for others")
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError("model_to_estimator: give keras_model or keras_model_path, one of them")
    if keras_model is None:
        keras_model = keras.models.load_model(keras_model_path, custom_objects=custom_objects)
    if not getattr(keras_model, "compiled", False) or keras_model.optimizer is None:
        raise ValueError(f"model_to_estimator: the Keras model {keras_model.name!r} is not compiled; "
                         "call model.compile(optimizer=..., loss=..., metrics=...) first")
    model_fn = _model_fn(keras_model, dict(metric_names_map or {}))
    return Estimator(model_fn, model_dir=model_dir, config=config)
