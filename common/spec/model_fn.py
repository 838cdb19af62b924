"""The model_fn contract: how user functions are called, `ModeKeys` and `EstimatorSpec`.

The TF1 `train_op` has no TF2 equivalent that works across towers, so the
spec carries the loss and the optimizer instead and the framework computes,
averages and applies the gradients (see `common.engine.step`).
"""

import collections
import functools
import inspect

from common.spec import export_outputs, metrics


def named_arguments(fn):
    """The arguments a call may name, as tf.estimator's fn_args counted them: not *args or **kwargs, nor
    what a functools.partial has bound (its value stays)."""
    return [name for name, parameter in inspect.signature(fn).parameters.items()
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
            and not (isinstance(fn, functools.partial) and name in fn.keywords)]


def call_with_wanted_args(fn, required, optional):
    """fn(**required, **the items of `optional` that fn's signature names):
    model_fn and input_fn may leave labels, mode, params and config out."""
    wanted = set(named_arguments(fn))
    return fn(**required, **{name: value for name, value in optional.items() if name in wanted})


class ModeKeys:
    """The three modes a model_fn is called in, named as in tf.estimator."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"

    ALL = (TRAIN, EVAL, PREDICT)


_SPEC_FIELDS = (
    "mode",
    "predictions",
    "loss",
    "optimizer",
    "learning_rate",
    "eval_metric_ops",
    "scalars",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
    "train_op",
    "export_outputs",
    "scaffold",
    "training_chief_hooks",
)


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """What model_fn returns: one tower's answer for one mode, as tf.estimator's EstimatorSpec.

    Args:
      mode: one of ModeKeys.
      predictions: a tensor or a dict of tensors, batch-major (PREDICT; also allowed in TRAIN and EVAL).
      loss: a scalar tensor, the tower's mean loss (TRAIN and EVAL).
      optimizer: a keras.optimizers.Optimizer (TRAIN), made once (common.get_optimizer): the first TRAIN
        call's is the one used for the Estimator's life; later calls' objects are ignored.
      learning_rate: a scalar tensor, optional: written into the optimizer's learning rate before each update
        (the optimizer must then be built with a float rate), and what hooks and summaries see as
        `learning_rate`; without it the optimizer's own (possibly scheduled) rate is reported.
      eval_metric_ops: {name: a common.metrics metric, a Keras metric object updated in model_fn, or a TF1
        (value, update_op) pair} (EVAL).
      scalars: {name: scalar tensor} of extra per-step values (TRAIN), averaged over the towers; hooks ask for
        them by name and the SummarySaverHook writes them.
      training_hooks: common.hooks.Hook objects (or TF1 SessionRunHooks) run by train().
      evaluation_hooks: likewise, run by evaluate().
      prediction_hooks: likewise, run by predict().
      train_op: instead of optimizer (TRAIN): what model_fn made of an optimizer's minimize or apply_gradients
        (a TF1 optimizer, or a Keras optimizer model_fn made itself), grouped with anything else; the update is
        done after the towers, with their averaged gradients.
      export_outputs: {signature key: PredictOutput, ClassificationOutput or RegressionOutput} (PREDICT);
        without it an export serves `predictions` under serving_default.
      scaffold: a common.tf1.train.Scaffold (TRAIN): its saver (a tf.train.Checkpoint, written and resumed
        through) and init_fn.
      training_chief_hooks: hooks run by the chief alone (on one host, by every run).
    Raises:
      ValueError: mode is not one of ModeKeys.ALL.
    """

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        optimizer=None,
        learning_rate=None,
        eval_metric_ops=None,
        scalars=None,
        training_hooks=(),
        evaluation_hooks=(),
        prediction_hooks=(),
        train_op=None,
        export_outputs=None,
        scaffold=None,
        training_chief_hooks=(),
    ):
        if mode not in ModeKeys.ALL:
            raise ValueError(
                f"EstimatorSpec: mode must be one of {ModeKeys.ALL}, got {mode!r}"
            )
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            optimizer,
            learning_rate,
            dict(eval_metric_ops or {}),
            dict(scalars or {}),
            tuple(training_hooks or ()),
            tuple(evaluation_hooks or ()),
            tuple(prediction_hooks or ()),
            train_op,
            export_outputs,
            scaffold,
            tuple(training_chief_hooks or ()),
        )


def check_spec(spec, mode):
    """Raises ValueError when a model_fn's answer cannot serve `mode`."""
    if not isinstance(spec, EstimatorSpec):
        raise ValueError(
            f"model_fn must return a common.EstimatorSpec, got {type(spec).__name__}"
        )
    if spec.mode != mode:
        raise ValueError(
            f"model_fn was called in mode {mode!r} but returned a spec for "
            f"mode {spec.mode!r}"
        )
    if mode == ModeKeys.TRAIN:
        if spec.loss is None:
            raise ValueError("model_fn returned no loss in TRAIN mode")
        if spec.optimizer is None and spec.train_op is None:
            raise ValueError("model_fn returned no optimizer (or train_op) in TRAIN mode")
    elif mode == ModeKeys.EVAL:
        if spec.loss is None:
            raise ValueError("model_fn returned no loss in EVAL mode")
    elif spec.predictions is None:
        raise ValueError("model_fn returned no predictions in PREDICT mode")
    else:
        export_outputs.check(spec.export_outputs)
    for name, metric in spec.eval_metric_ops.items():
        metrics.check(name, metric)
    if spec.loss is not None and spec.loss.shape.rank not in (0, None):
        raise ValueError(
            f"model_fn's loss must be a scalar, got shape {spec.loss.shape}"
        )
