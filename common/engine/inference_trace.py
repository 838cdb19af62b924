"""model_fn in PREDICT mode over the training features, as one TF2 function.

It is the graph each checkpoint's `.meta` holds (common.state.inference_meta_graph),
as tf.estimator's `.meta` held the model's graph: programs import it in a TF1
session and run or freeze the model's tensors by name. Traced once per
model and features signature, after the TRAIN probe built the model; a
model_fn that has no PREDICT mode, or makes in it variables the training
graph did not, gives no function and the reason instead.
"""

import re
import weakref

import tensorflow as tf

from common.internals import keras_internals
from common.spec.model_fn import ModeKeys
from common.state import checkpoints
from common.state.inference_meta_graph import InferenceFunction

_TRACED = weakref.WeakKeyDictionary()  # ModelBuilder -> {features signature: InferenceFunction}


def predict_function(model, element_spec):
    """The InferenceFunction of `model` (a built ModelBuilder) over the features of a training dataset's
    element_spec ((features, labels) or features alone), its argument placeholders named by feature key."""
    features = _features_signature(element_spec)
    key = repr(features)
    cache = _TRACED.setdefault(model, {})
    if key not in cache:
        cache[key] = _trace(model, features)
    return cache[key]


def _trace(model, features):
    def predictions(features):
        with tf.device(model.first_tower_device):
            spec = model.call(features, None, ModeKeys.PREDICT).spec
        if spec.predictions is None:
            raise ValueError("model_fn returned no predictions in PREDICT mode")
        return spec.predictions
    try:
        with keras_internals.keeping_name_scope_stack(), model.scope():
            return InferenceFunction(tf.function(predictions, autograph=False).get_concrete_function(features))
    except Exception as error:  # (any failure of the program's model_fn: the .meta is then the variables alone)
        return InferenceFunction(None, checkpoints.first_line(error))


def _features_signature(element_spec):
    """The features' specs, batch size unknown, each named by its key (the placeholder a TF1 program feeds)."""
    features = element_spec[0] if isinstance(element_spec, tuple) and len(element_spec) == 2 else element_spec
    if isinstance(features, dict):
        return {key: _named(spec, key) for key, spec in features.items()}
    return _named(features, "features")


def _named(spec, name):
    """A dense feature's spec named `name` (as a graph takes an op's name), its batch size unknown."""
    if not isinstance(spec, tf.TensorSpec):
        return spec  # (sparse and ragged features: their placeholders keep the trace's names)
    shape = [None] + spec.shape.as_list()[1:] if spec.shape.rank else spec.shape
    return tf.TensorSpec(shape, spec.dtype, name=re.sub(r"[^A-Za-z0-9_.\-/]", "_", str(name)).lstrip("_/-") or "x")
