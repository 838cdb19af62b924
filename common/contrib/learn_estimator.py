"""tf.contrib.learn's own Estimator: fit / evaluate / predict on numpy arrays or an input_fn, ModelFnOps, SKCompat.

Before tf.estimator (TensorFlow 1.0-1.2), programs built
`tf.contrib.learn.Estimator(model_fn=...)` and called
`fit(x=..., y=..., batch_size=..., steps=...)`, or wrapped it in `SKCompat`
for scikit-learn's fit / score / predict. model_fn took `(features,
targets)`, `(features, targets, mode)` or `(..., mode, params)` and returned
`(predictions, loss, train_op)` or a `ModelFnOps`. Here that Estimator is
this project's, and numpy input is read as contrib's data feeder read it:
features a tensor (or the dict given), float64 as float32, a 1-D x as one
column, batches in the order of numpy's RandomState(42) permutations, one
per epoch (in order when not shuffled), the whole set as one batch when no
batch_size is given, an epoch's last batch the rest of it.
"""

import collections

import numpy as np
import tensorflow as tf

from common.adapters.session_run_hooks import FeedFnHook
from common.estimator.estimator import Estimator as _Estimator
from common.spec import metrics
from common.spec.model_fn import EstimatorSpec, ModeKeys, named_arguments

_FEEDER_SEED = 42  # contrib's data feeder shuffled with np.random.RandomState(42)


class ModelFnOps(collections.namedtuple("ModelFnOps", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "output_alternatives",
        "training_chief_hooks", "training_hooks", "scaffold"])):
    """contrib.learn's model_fn result: an EstimatorSpec by another name."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, output_alternatives=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None):
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, output_alternatives,
                               training_chief_hooks, training_hooks, scaffold)

    def estimator_spec(self, default_serving_output_alternative_key=None):
        """The EstimatorSpec; a metric that is a plain tensor (contrib.metrics.accuracy's, which contrib read once
        after the evaluation, from one batch more) is reported as its mean over the batches evaluated."""
        del default_serving_output_alternative_key  # (the export's default signature is serving_default)
        eval_metric_ops = None if self.eval_metric_ops is None else {
            name: metrics.mean(value) if isinstance(value, tf.Tensor) else value
            for name, value in self.eval_metric_ops.items()}
        return EstimatorSpec(self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
                             eval_metric_ops=eval_metric_ops, training_chief_hooks=self.training_chief_hooks,
                             training_hooks=self.training_hooks, scaffold=self.scaffold)


def _feeder_array(value, what):
    array = np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)  # (contrib's feeder fed float64 as float32)
    if array.ndim == 0:
        raise ValueError(f"contrib.learn: {what} must hold one row per example, got a scalar")
    return array


def _numpy_input_fn(x, y, batch_size, shuffle, epochs):
    """An input_fn giving contrib's data feeder's batches of x (an array, or a dict of them) and y."""
    features = {k: _feeder_array(v, f"x[{k!r}]") for k, v in x.items()} if isinstance(x, dict) \
        else _feeder_array(x, "x")
    count = len(next(iter(features.values())) if isinstance(features, dict) else features)
    if not isinstance(features, dict) and features.ndim == 1:
        features = features.reshape(count, 1)
    labels = None if y is None else _feeder_array(y, "y")
    if labels is not None and len(labels) != count:
        raise ValueError(f"contrib.learn: x has {count} rows and y {len(labels)}")
    size = count if batch_size is None else batch_size
    if size <= 0:
        raise ValueError(f"Invalid batch_size {batch_size}.")

    def batches():
        order_of = np.random.RandomState(_FEEDER_SEED).permutation if shuffle else np.arange
        epoch = 0
        while epochs is None or epoch < epochs:
            order = order_of(count)
            for start in range(0, count, size):
                taken = order[start:start + size]
                batch = tf.nest.map_structure(lambda a: a[taken], features)
                yield batch if labels is None else (batch, labels[taken])
            epoch += 1

    def spec(array):
        return tf.TensorSpec((None,) + array.shape[1:], tf.as_dtype(array.dtype))

    signature = tf.nest.map_structure(spec, features)
    if labels is not None:
        signature = (signature, spec(labels))
    return lambda: tf.data.Dataset.from_generator(batches, output_signature=signature)


def input_fn_of(x, y, input_fn, batch_size, shuffle, epochs):
    """The input_fn a contrib call means: the one given, or one of contrib's feeder over x and y."""
    if input_fn is None:
        if x is None:
            raise ValueError("Either x or input_fn must be provided.")
        if tf.is_tensor(x) or tf.is_tensor(y):
            raise ValueError("Inputs cannot be tensors. Please provide input_fn.")
        return _numpy_input_fn(x, y, batch_size, shuffle, epochs)
    if x is not None or y is not None:
        raise ValueError("Can not provide both input_fn and x or y.")
    if batch_size is not None:
        raise ValueError("Can not provide both input_fn and batch_size.")
    return input_fn


def _stand_in_labels(spec, features):
    """Labels of the trained labels' kind for a batch of features: contrib's predict fed model_fn placeholders
    of them (TF1 never fed them), so a model_fn could build its loss in every mode."""
    rows = tf.shape(tf.nest.flatten(features)[0])[0]
    return tf.zeros(tf.concat([[rows], tf.constant(spec.shape[1:].as_list(), tf.int32)], 0), spec.dtype)


def _contrib_model_fn(model_fn, feature_engineering_fn):
    """model_fn(features, labels, mode, params, config) calling contrib's model_fn as contrib called it
    (positionally, with mode, params and config where it names them) and reading what it returns."""
    wanted = set(named_arguments(model_fn))
    trained_labels = []  # the TensorSpec of the labels a train call gave

    def called(features, labels, mode, params, config):
        if mode == ModeKeys.TRAIN and tf.is_tensor(labels) and labels.shape.rank is not None:
            trained_labels[:] = [tf.TensorSpec(labels.shape, labels.dtype)]
        if mode == ModeKeys.PREDICT and labels is None and trained_labels:
            labels = _stand_in_labels(trained_labels[0], features)
        features, labels = feature_engineering_fn(features, labels)
        optional = {"mode": mode, "params": params, "config": config}
        result = model_fn(features, labels, **{name: value for name, value in optional.items() if name in wanted})
        if isinstance(result, ModelFnOps):
            return result.estimator_spec()
        if isinstance(result, EstimatorSpec):
            return result
        if not (isinstance(result, tuple) and len(result) == 3):
            raise ValueError(f"contrib.learn Estimator: model_fn returned a {type(result).__name__}; it returns "
                             "(predictions, loss, train_op) or a ModelFnOps")
        predictions, loss, train_op = result
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        return EstimatorSpec(mode, predictions=predictions, loss=None if mode == ModeKeys.PREDICT else loss,
                             train_op=train_op if mode == ModeKeys.TRAIN else None)

    return called


class ContribMethods:
    """contrib.learn's fit, evaluate and predict over this project's Estimator (train, evaluate, predict).
    `_features_of(x)`: what an x given as arrays is to model_fn."""

    def _features_of(self, x):
        return x

    def _input_fn(self, x, y, input_fn, batch_size, shuffle, epochs):
        return input_fn_of(None if x is None else self._features_of(x), y, input_fn, batch_size, shuffle, epochs)

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None, max_steps=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        self.train(self._input_fn(x, y, input_fn, batch_size, shuffle=True, epochs=None), hooks=monitors,
                   steps=steps, max_steps=max_steps)
        return self

    def partial_fit(self, x=None, y=None, input_fn=None, steps=1, batch_size=None, monitors=None):
        return self.fit(x=x, y=y, input_fn=input_fn, steps=steps, batch_size=batch_size, monitors=monitors)

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None, steps=None, metrics=None,
                 name=None, checkpoint_path=None, hooks=None):
        """contrib's evaluate; also tf.estimator's evaluate(input_fn, ...), as train_and_evaluate calls it."""
        if callable(x) and y is None and input_fn is None:
            x, input_fn = None, x
        if metrics is not None:
            raise NotImplementedError("contrib.learn evaluate(metrics=...): return the metrics from model_fn "
                                      "(ModelFnOps(eval_metric_ops=...))")
        hooks = list(hooks or []) + ([FeedFnHook(feed_fn)] if feed_fn is not None else [])
        return super().evaluate(self._input_fn(x, y, input_fn, batch_size, shuffle=False, epochs=1), steps=steps,
                                hooks=hooks, checkpoint_path=checkpoint_path, name=name)

    def _predictions(self, x, input_fn, batch_size, outputs, as_iterable, iterate_batches=False):
        """Predictions of x or input_fn: one per example (a batch each with iterate_batches), or, with
        as_iterable=False, all of them in one array (a dict of arrays)."""
        given = self._input_fn(x, None, input_fn, batch_size, shuffle=False, epochs=1)
        if as_iterable:
            return super().predict(given, predict_keys=outputs, yield_single_examples=not iterate_batches)
        return _concatenated(list(super().predict(given, predict_keys=outputs, yield_single_examples=False)))

    def _infer_model(self, x, batch_size, outputs):
        """Every prediction of x in one array (a dict of them): what SKCompat.predict gives."""
        return self._predictions(x, None, batch_size, outputs, as_iterable=False)


class Estimator(ContribMethods, _Estimator):
    """tf.contrib.learn.Estimator(model_fn, model_dir, config, params, feature_engineering_fn): this project's
    Estimator (train, evaluate(input_fn), export) with contrib's fit, evaluate and predict."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, feature_engineering_fn=None):
        if model_fn is None:
            raise ValueError("contrib.learn Estimator: give model_fn (the premade estimators are common.canned's)")
        if params is not None and "params" not in named_arguments(model_fn):
            raise ValueError(f"Estimator's model_fn ({model_fn}) has less than 4 arguments, but not None params "
                             f"({params}) are passed.")
        super().__init__(_contrib_model_fn(model_fn, feature_engineering_fn or (lambda f, t: (f, t))),
                         model_dir=model_dir, config=config, params=params)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True, iterate_batches=False):
        return self._predictions(x, input_fn, batch_size, outputs, as_iterable, iterate_batches)


def _concatenated(batches):
    if not batches:
        raise ValueError("contrib.learn: the input gave no batch to predict on")
    if isinstance(batches[0], dict):
        return {key: np.concatenate([batch[key] for batch in batches]) for key in batches[0]}
    return np.concatenate(batches)


class SKCompat:
    """scikit-learn's fit / score / predict over a contrib.learn Estimator, with contrib's batch size of 128."""

    def __init__(self, estimator):
        self._estimator = estimator

    def fit(self, x, y, batch_size=128, steps=None, max_steps=None, monitors=None):
        self._estimator.fit(x=x, y=y, batch_size=batch_size, steps=steps, max_steps=max_steps, monitors=monitors)
        return self

    def score(self, x, y, batch_size=128, steps=None, metrics=None, name=None):
        return self._estimator.evaluate(x=x, y=y, batch_size=batch_size, steps=steps, metrics=metrics, name=name)

    def predict(self, x, batch_size=128, outputs=None):
        return self._estimator._infer_model(x, batch_size, outputs)
