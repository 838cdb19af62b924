"""Serving input receivers: what a SavedModel's signatures take, and how
that becomes model_fn's features.

Two forms are accepted, each of them `ServingInputReceiver(features,
receiver_tensors, receiver_tensors_alternatives)` as in tf.estimator:

- the TF1 form: the receiver fn makes placeholders (tf.compat.v1.placeholder,
  or common.placeholder: common.adapters.graph_input) and computes the features from them with ops. The
  fn runs in a TF1-style graph (tf.compat.v1.wrap_function) and the graph is
  pruned to a function from the receiver tensors to the features; an
  alternative feeds other tensors of the same graph. Receiver tensors computed
  from the placeholders (TF1 programs put derived features there) are inputs
  of the signature, as in TF1; a TF1 session also let a caller leave them
  unfed, so the placeholders alone feed a second function (placeholders_alone).
- the TF2 form: receiver_tensors are tf.TensorSpecs and features is a
  function of the received dict (or the dict itself when features is None);
  an alternative is another ServingInputReceiver.

Each receiver becomes `SignatureInputs`: input specs by name and a function
from the received tensors to features.
"""

import dataclasses
from typing import Callable, Dict, Optional

import tensorflow as tf

DEFAULT_SIGNATURE = "serving_default"
SINGLE_RECEIVER_NAME = "input"     # tf.estimator's names for a receiver or feature given alone
SINGLE_FEATURE_NAME = "feature"
EXAMPLES_NAME = "examples"         # the serialized tf.Examples of a parsing receiver


class ServingInputReceiver:
    """tf.estimator's ServingInputReceiver, in its TF1 and TF2 forms (see the module): what a
    serving_input_receiver_fn returns. Its arguments are kept as the attributes of their names
    (receiver_tensors_alternatives as a dict); nothing is checked here, but the export checks them (ValueError)
    where tf.estimator's constructor did.

    Args:
      features: TF1 form: a tensor, or a dict name -> tensor, computed from the receiver tensors (one tensor
        reaches model_fn as {"feature": tensor}, as in tf.estimator). TF2 form: a function received dict ->
        model_fn's features, or None: the received dict itself.
      receiver_tensors: TF1 form: a tensor, or a dict name -> tensor (placeholders, or tensors computed from
        them), the signature's inputs (one tensor is named "input"). TF2 form: a tf.TensorSpec, or a dict name
        -> tf.TensorSpec (one spec is named "features").
      receiver_tensors_alternatives: signature name -> another signature's inputs: TF1 form, a tensor or a dict
        of tensors of the same graph (fed instead, to the same features); TF2 form, another
        ServingInputReceiver. None: no alternatives.
    """

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = features
        self.receiver_tensors = receiver_tensors
        self.receiver_tensors_alternatives = dict(receiver_tensors_alternatives or {})


class TensorServingInputReceiver(ServingInputReceiver):
    """A receiver whose single feature tensor reaches model_fn as itself, not in a dict:
    tf.estimator's TensorServingInputReceiver. Arguments as ServingInputReceiver's, features one tensor."""


@dataclasses.dataclass
class SignatureInputs:
    """name -> TensorSpec of a signature's inputs, and received dict -> features. placeholders_alone: for a
    TF1 receiver some of whose receiver tensors are computed from its placeholders, the same inputs fed the
    placeholders alone, the others computed as a TF1 session computed a tensor left unfed."""

    specs: Dict[str, tf.TensorSpec]
    features_fn: Callable
    placeholders_alone: Optional["SignatureInputs"] = None


def _as_dict(value, single_name):
    return dict(value) if isinstance(value, dict) else {single_name: value}


def _spec_named(spec, name, default_batch_size=None):
    shape = spec.shape.as_list() if spec.shape.rank is not None else None
    if shape and default_batch_size is not None:
        shape = [default_batch_size] + shape[1:]
    return tf.TensorSpec(shape, spec.dtype, name=name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn that serves raw feature tensors: tf.estimator's build_raw_serving_input_receiver_fn, taking
    specs where tf.estimator's took tensors (whose batch dimension it always replaced).

    model_fn then gets what it is given in training: a dict of tensors for a
    dict, the tensor itself for one spec, whose signature input is named after
    the spec (default "features").

    Args:
      features: a tf.TensorSpec (or common.placeholder, which gives one when run eagerly), or a dict name ->
        tf.TensorSpec: the signature's inputs, with their shapes and dtypes.
      default_batch_size: an int to make each spec's first (batch) dimension (where it has one), or None: the
        shapes as they are (a batch dimension of None takes any batch).

    Returns:
      serving_input_receiver_fn(): a function of no arguments that returns a TF2-form ServingInputReceiver,
      for Estimator.export_saved_model and the exporters.
    """
    single = not isinstance(features, dict)
    single_name = (features.name or "features") if single else None
    specs = {single_name: features} if single else dict(features)
    specs = {name: _spec_named(spec, name, default_batch_size) for name, spec in specs.items()}

    def serving_input_receiver_fn():
        return ServingInputReceiver((lambda received: received[single_name]) if single else None, specs)

    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn whose signature takes serialized tf.Example strings
    ("examples") and parses them with `feature_spec`, as TensorFlow Serving's
    Classify and Regress APIs send them: tf.estimator's build_parsing_serving_input_receiver_fn.

    Args:
      feature_spec: feature name -> tf.io.FixedLenFeature, VarLenFeature, ... as tf.io.parse_example takes it
        (tf.feature_column.make_parse_example_spec makes one from feature columns).
      default_batch_size: the number of examples every call takes, or None: any number.

    Returns:
      serving_input_receiver_fn(): a function of no arguments that returns a TF2-form ServingInputReceiver
      whose one input, "examples", is a [batch] string tensor and whose features are the parsed dict.
    """
    specs = {EXAMPLES_NAME: tf.TensorSpec([default_batch_size], tf.string, name=EXAMPLES_NAME)}

    def serving_input_receiver_fn():
        if not tf.executing_eagerly():  # (in the export's graph: TF1's form, whose features a receiver fn of
            # the program's own can read and transform, as TFX trainers did)
            examples = tf.compat.v1.placeholder(tf.string, [default_batch_size], name="input_example_tensor")
            return ServingInputReceiver(tf.io.parse_example(examples, feature_spec), {EXAMPLES_NAME: examples})
        return ServingInputReceiver(
            lambda received: tf.io.parse_example(received[EXAMPLES_NAME], feature_spec), specs)

    return serving_input_receiver_fn


def _tf2_inputs(receiver):
    specs = {name: _spec_named(spec, name) for name, spec in _as_dict(receiver.receiver_tensors, "features").items()}
    features = receiver.features
    return SignatureInputs(specs, dict if features is None else features)


def _check_tensors(what, tensors, kinds=(tf.Tensor,)):
    for name, tensor in tensors.items():
        if not isinstance(tensor, kinds):
            raise ValueError(
                f"serving_input_receiver_fn: {what} {name!r} is a {type(tensor).__name__}; give tensors "
                "(placeholders and ops on them), or tf.TensorSpecs with a features function")


def _tf1_inputs(graph_function, receiver, receiver_tensors):
    tensors = _as_dict(receiver_tensors, SINGLE_RECEIVER_NAME)
    _check_tensors("receiver tensor", tensors)
    single_tensor = isinstance(receiver, TensorServingInputReceiver) and not isinstance(receiver.features, dict)
    features = receiver.features if single_tensor else _as_dict(receiver.features, SINGLE_FEATURE_NAME)
    _check_tensors("feature", features if isinstance(features, dict) else {SINGLE_FEATURE_NAME: features},
                   (tf.Tensor, tf.SparseTensor, tf.RaggedTensor))  # (a parsed VarLenFeature is sparse)
    placeholders = {name: tensor for name, tensor in tensors.items() if tensor.op.type == "Placeholder"}
    alone = _pruned(graph_function, placeholders, features) if 0 < len(placeholders) < len(tensors) else None
    return dataclasses.replace(_pruned(graph_function, tensors, features), placeholders_alone=alone)


def _pruned(graph_function, tensors, features):
    """The receiver graph pruned to a function from `tensors` (name -> tensor) to the features."""
    names = sorted(tensors)
    pruned = graph_function.prune(feeds=[tensors[n] for n in names], fetches=features)
    specs = {n: tf.TensorSpec(tensors[n].shape, tensors[n].dtype, name=n) for n in names}
    shapes = tf.nest.map_structure(lambda feature: feature.shape, features)

    def features_of(received):
        """The features, with the static shapes the receiver gave them: pruning rebuilds the graph from its ops,
        and a shape set with set_shape (an image decoded to [None, None, None, 1]) is no op."""
        found = pruned(*[received[n] for n in names])
        tf.nest.map_structure(lambda feature, shape: feature.set_shape(shape) if isinstance(feature, tf.Tensor)
                              else None, found, shapes)
        return found

    return SignatureInputs(specs, features_of)


def serving_inputs(serving_input_receiver_fn):
    """signature name -> SignatureInputs of the receiver fn: the default, then
    one per alternative."""
    made = []
    graph_function = tf.compat.v1.wrap_function(lambda: made.append(serving_input_receiver_fn()), [])
    receiver = made[0]
    if not isinstance(receiver, ServingInputReceiver):
        raise ValueError(f"serving_input_receiver_fn must return a common.ServingInputReceiver, "
                         f"got {type(receiver).__name__}")
    tensors = list(_as_dict(receiver.receiver_tensors, SINGLE_RECEIVER_NAME).values())
    if all(isinstance(t, tf.TensorSpec) for t in tensors):
        inputs = {DEFAULT_SIGNATURE: _tf2_inputs(receiver)}
        for name, alternative in receiver.receiver_tensors_alternatives.items():
            inputs[name] = _tf2_inputs(alternative)
        return inputs
    inputs = {DEFAULT_SIGNATURE: _tf1_inputs(graph_function, receiver, receiver.receiver_tensors)}
    for name, alternative in receiver.receiver_tensors_alternatives.items():
        inputs[name] = _tf1_inputs(graph_function, receiver, alternative)
    return inputs
