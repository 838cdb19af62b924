"""tf.contrib.learn's premade estimators (TensorFlow 1.0's), with contrib's fit, evaluate and predict.

TensorFlow 1.0's getting-started program built
`tf.contrib.learn.DNNClassifier(feature_columns=[real_valued_column("",
dimension=4)], hidden_units=[10, 20, 10], n_classes=3)`, called
`fit(x=..., y=..., steps=2000)`, read `evaluate(x=..., y=...)["accuracy"]`
and listed `predict(x=...)`'s classes. Each estimator here is
common.canned.v1's of that name (TF1's optimizers and rates, its binary
AUC) with the mean loss contrib's heads trained on, an array x fed as the
unnamed ("") column's features, and contrib's predictions: class ids from
predict and predict_classes, probabilities from predict_proba, values from
a regressor's predict and predict_scores; `outputs=[...]` (and SKCompat)
gives them by contrib's keys ("classes", "probabilities", "logits",
"scores").
"""

import numpy as np
import tensorflow as tf

from common.canned import heads, v1
from common.contrib.learn_estimator import ContribMethods

_REFUSED = ("gradient_clip_norm", "feature_engineering_fn", "embedding_lr_multipliers", "input_layer_min_slice_size")


def infer_real_valued_columns_from_input(x):
    """The real-valued columns contrib inferred from arrays: one unnamed column of an array's row size, or one
    per key of a dict of arrays."""
    def column(name, array):
        return tf.feature_column.numeric_column(name, shape=(int(np.prod(np.shape(array)[1:], dtype=int)),))
    if isinstance(x, dict):
        return [column(name, array) for name, array in sorted(x.items())]
    return [column("", x)]


def _unnamed(x):
    """An array x as contrib's premade estimators saw it: the unnamed column's features, one row each."""
    if isinstance(x, dict):
        return x
    array = np.asarray(x)
    return {"": array.reshape(len(array), -1)}


def _premade_arguments(what, scope):
    """contrib's constructor arguments (the constructor's locals) as common.canned.v1's (contrib's heads trained
    on the mean loss)."""
    contrib = {name: value for name, value in scope.items() if name not in ("self", "__class__")}
    refused = [name for name in _REFUSED if contrib.pop(name, None) is not None]
    if contrib.pop("enable_centered_bias", False):
        refused.append("enable_centered_bias=True")
    if refused:
        raise ValueError(f"contrib.learn.{what}: {', '.join(refused)} have no counterpart here")
    renamed = {"weight_column_name": "weight_column", "label_keys": "label_vocabulary"}
    arguments = {renamed.get(name, name): value for name, value in contrib.items() if value is not None}
    return dict(arguments, loss_reduction=heads.SUM_OVER_BATCH_SIZE)


def _one_value(array):
    """A class id or value of each example, not a list of one (a numpy scalar for one example, as contrib's)."""
    value = array[..., 0] if np.shape(array)[-1:] == (1,) else array
    return value[()] if np.ndim(value) == 0 else value


class _Premade(ContribMethods):
    _KEYS = {}  # contrib's prediction key -> this project's

    def _features_of(self, x):
        return _unnamed(x)

    def _contrib_keyed(self, predictions, outputs=None):
        """contrib's keys for these predictions (of one example or many): a class id or value, not a list of one."""
        keys = outputs or list(self._KEYS)
        return {key: _one_value(predictions[self._KEYS[key]]) if key in ("classes", "scores")
                else predictions[self._KEYS[key]] for key in keys}

    def _given(self, key, x, input_fn, batch_size, as_iterable):
        if as_iterable:
            return (self._contrib_keyed(p, [key])[key] for p in
                    self._predictions(x, input_fn, batch_size, [self._KEYS[key]], as_iterable=True))
        return self._contrib_keyed(self._predictions(x, input_fn, batch_size, [self._KEYS[key]], False), [key])[key]

    def _infer_model(self, x, batch_size, outputs):
        return self._contrib_keyed(self._predictions(x, None, batch_size, None, as_iterable=False), outputs)


class _Classifier(_Premade):
    _KEYS = {"classes": "class_ids", "probabilities": "probabilities", "logits": "logits"}

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        """The class ids (or, with outputs, a dict of contrib's keys for each example)."""
        if not outputs:
            return self.predict_classes(x, input_fn, batch_size, as_iterable)
        if as_iterable:
            return (self._contrib_keyed(p, outputs) for p in self._predictions(x, input_fn, batch_size, None, True))
        return self._contrib_keyed(self._predictions(x, input_fn, batch_size, None, False), outputs)

    def predict_classes(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        return self._given("classes", x, input_fn, batch_size, as_iterable)

    def predict_proba(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        return self._given("probabilities", x, input_fn, batch_size, as_iterable)


class _Regressor(_Premade):
    _KEYS = {"scores": "predictions"}

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        return self.predict_scores(x, input_fn, batch_size, as_iterable)

    def predict_scores(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        return self._given("scores", x, input_fn, batch_size, as_iterable)


class DNNClassifier(_Classifier, v1.DNNClassifier):
    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column_name=None,
                 optimizer=None, activation_fn=tf.nn.relu, dropout=None, gradient_clip_norm=None,
                 enable_centered_bias=False, config=None, feature_engineering_fn=None, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None, label_keys=None):
        super().__init__(**_premade_arguments("DNNClassifier", locals()))


class DNNRegressor(_Regressor, v1.DNNRegressor):
    def __init__(self, hidden_units, feature_columns, model_dir=None, weight_column_name=None, optimizer=None,
                 activation_fn=tf.nn.relu, dropout=None, gradient_clip_norm=None, enable_centered_bias=False,
                 config=None, feature_engineering_fn=None, label_dimension=1, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None):
        super().__init__(**_premade_arguments("DNNRegressor", locals()))


class LinearClassifier(_Classifier, v1.LinearClassifier):
    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column_name=None, optimizer=None,
                 gradient_clip_norm=None, enable_centered_bias=False, config=None, feature_engineering_fn=None,
                 label_keys=None):
        super().__init__(**_premade_arguments("LinearClassifier", locals()))


class LinearRegressor(_Regressor, v1.LinearRegressor):
    def __init__(self, feature_columns, model_dir=None, weight_column_name=None, optimizer=None,
                 gradient_clip_norm=None, enable_centered_bias=False, label_dimension=1, config=None,
                 feature_engineering_fn=None):
        super().__init__(**_premade_arguments("LinearRegressor", locals()))
