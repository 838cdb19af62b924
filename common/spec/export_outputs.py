"""What an exported signature returns, and the method TensorFlow Serving calls it by.

EstimatorSpec.export_outputs maps signature keys to these, as in
tf.estimator. TensorFlow Serving's Classify and Regress APIs call a
signature whose method name says so and whose one input ("inputs") is a
batch of serialized tf.Example strings; TF2's SavedModel writer marks every
signature as predict, so common.export rewrites the method names after the
write. A Classification or Regression output served from a receiver that is
not one string tensor is left out of the export, with a warning, as
tf.estimator left it out.
"""

import tensorflow as tf

PREDICT_METHOD = "tensorflow/serving/predict"
CLASSIFY_METHOD = "tensorflow/serving/classify"
REGRESS_METHOD = "tensorflow/serving/regress"
EXAMPLES_INPUT = "inputs"  # the input key of classify and regress signatures
# The exported module's attribute holding, by signature, its function of a TF1 receiver's placeholders alone
# (common.export.saved_model writes it, common.contrib.predictor calls it)
PLACEHOLDERS_FED = "placeholders_fed"


class ExportOutput:
    """Base class of what a signature returns; `method` is the TensorFlow Serving method it is exported with."""

    method = PREDICT_METHOD

    def outputs(self):
        """The signature's outputs.

        Returns:
          A dict output key -> tensor (a method: tf.estimator's outputs was a property).

        Raises:
          NotImplementedError: here, in the base class.
        """
        raise NotImplementedError


class PredictOutput(ExportOutput):
    """Any tensors, served by the predict method: tf.estimator's PredictOutput.

    Args:
      outputs: a dict output key -> tensor, or one tensor, served as "output".
    """

    def __init__(self, outputs):
        self._outputs = dict(outputs) if isinstance(outputs, dict) else {"output": outputs}

    def outputs(self):
        """The signature's outputs.

        Returns:
          A dict output key -> tensor.
        """
        return self._outputs


class ClassificationOutput(ExportOutput):
    """A classifier's outputs, served by the classify method (from a receiver of serialized tf.Examples; else
    left out: see the module): tf.estimator's ClassificationOutput.

    Args:
      scores: a float tensor, [batch, classes]: each class's score; or None.
      classes: a string tensor, [batch, classes]: the classes' names, in the order of the scores; or None.

    Raises:
      ValueError: neither scores nor classes given, classes not a string tensor, or scores not a float one.
    """

    method = CLASSIFY_METHOD

    def __init__(self, scores=None, classes=None):
        if scores is None and classes is None:
            raise ValueError("ClassificationOutput: give scores, classes or both")
        if classes is not None and classes.dtype != tf.string:
            raise ValueError(f"ClassificationOutput: classes must be a string tensor, got {classes.dtype.name} "
                             "(map class ids to names with tf.gather, or tf.strings.as_string)")
        if scores is not None and not scores.dtype.is_floating:
            raise ValueError(f"ClassificationOutput: scores must be a float tensor, got {scores.dtype.name}")
        self._outputs = {k: v for k, v in (("scores", scores), ("classes", classes)) if v is not None}

    def outputs(self):
        """The signature's outputs.

        Returns:
          A dict with "scores" and/or "classes": those given (tf.estimator's properties scores and classes
          are its values).
        """
        return self._outputs


class RegressionOutput(ExportOutput):
    """A regressor's output, served by the regress method (from a receiver of serialized tf.Examples; else
    left out: see the module): tf.estimator's RegressionOutput.

    Args:
      value: a float tensor, [batch] or [batch, 1].

    Raises:
      ValueError: value not a float tensor.
    """

    method = REGRESS_METHOD

    def __init__(self, value):
        if not value.dtype.is_floating:
            raise ValueError(f"RegressionOutput: value must be a float tensor, got {value.dtype.name}")
        self._value = value

    def outputs(self):
        """The signature's outputs.

        Returns:
          {"outputs": value} (tf.estimator's property value is its value).
        """
        return {"outputs": self._value}


def takes_examples(specs):
    """Whether a signature's inputs are one batch of serialized tf.Examples,
    as classify and regress methods require."""
    return len(specs) == 1 and next(iter(specs.values())).dtype == tf.string \
        and next(iter(specs.values())).shape.rank == 1


def method_for(output, specs):
    """The method name `output` is exported with, given its signature's inputs."""
    return output.method if output.method == PREDICT_METHOD or takes_examples(specs) else PREDICT_METHOD


def check(export_outputs):
    """ValueError unless export_outputs is None or a dict of ExportOutputs."""
    if export_outputs is None:
        return
    if not isinstance(export_outputs, dict) or not export_outputs:
        raise ValueError(f"export_outputs must be a non-empty dict of signature key -> "
                         f"PredictOutput/ClassificationOutput/RegressionOutput, got {export_outputs!r}")
    for key, output in export_outputs.items():
        if not isinstance(output, ExportOutput):
            raise ValueError(f"export_outputs[{key!r}] is a {type(output).__name__}; give a common.export_outputs "
                             "PredictOutput, ClassificationOutput or RegressionOutput")
