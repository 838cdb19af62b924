"""TPUEstimator and TPUEstimatorSpec with use_tpu=False, as tf.estimator.tpu ran them off a TPU.

TPUEstimator set params["batch_size"] for input_fn and model_fn to the
batch size of the mode (train_batch_size, eval_batch_size,
predict_batch_size), and params["use_tpu"] = False for model_fn; beyond TF
2.15, which gave a TPUContext only on a TPU, both also get params["context"],
a one-host TPUContext (common.tpu.context). model_fn returned a TPUEstimatorSpec whose metrics are a
(metric_fn, tensors) pair, whose scaffold is made by scaffold_fn and whose
summaries come from host_call (run on the host after the steps, in training:
common.tpu.host_call). `as_estimator_spec` is what TPUEstimator made of it on
a CPU, and what the project's Estimator runs. As off a TPU in TF 2.15, the
step rates come from TPUEstimator's own hook (common.tpu.hooks: global_step/sec
and examples/sec, no loss lines), and an export holds the MetaGraph tagged
"serve" and a copy tagged "serve", "tpu" (export_to_cpu, export_to_tpu): TPU
serving setups load it by those tags, and it runs on the host.
"""

import collections
import functools
import inspect

import numpy as np
from tensorflow.compat.v1 import logging

from common.estimator.estimator import Estimator
from common.estimator.run_config import RunConfig
from common.spec.model_fn import EstimatorSpec, ModeKeys, call_with_wanted_args
from common.tpu import context as tpu_context
from common.tpu import host_call
from common.tpu import hooks as tpu_hooks
from common.tpu.run_config import InputPipelineConfig

_TPU_SPEC_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs", "scaffold_fn",
                    "host_call", "training_hooks", "evaluation_hooks", "prediction_hooks")


def _call(fn_and_tensors):
    fn, tensors = fn_and_tensors
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _TPU_SPEC_FIELDS)):
    """tf.estimator.tpu.TPUEstimatorSpec (see the module)."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None, export_outputs=None,
                scaffold_fn=None, host_call=None, training_hooks=None, evaluation_hooks=None,
                prediction_hooks=None):
        for name, pair in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            if pair is not None and (not isinstance(pair, (tuple, list)) or len(pair) != 2 or not callable(pair[0])):
                raise ValueError(f"TPUEstimatorSpec {name} must be a (function, tensors) pair, got {pair!r}")
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics, export_outputs, scaffold_fn,
                               host_call, training_hooks, evaluation_hooks, prediction_hooks)

    def as_estimator_spec(self, host_call_every_n_steps=1):
        """The EstimatorSpec this stands for: metric_fn called on its tensors, scaffold_fn run, and in training
        host_call run by a hook on the host (common.tpu.host_call), as TPUEstimator ran it."""
        training_hooks = list(self.training_hooks or ())
        if self.host_call is not None and self.mode == ModeKeys.TRAIN:
            training_hooks.append(host_call.host_call_hook(self.host_call, host_call_every_n_steps))
        return EstimatorSpec(
            self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
            eval_metric_ops=_call(self.eval_metrics) if self.eval_metrics is not None else None,
            export_outputs=self.export_outputs, scaffold=self.scaffold_fn() if self.scaffold_fn else None,
            training_hooks=training_hooks, evaluation_hooks=self.evaluation_hooks,
            prediction_hooks=self.prediction_hooks)


class _Params(dict):
    """A mode's params with no batch size (its *_batch_size None): reading params["batch_size"] says which."""

    def __init__(self, params, flag):
        super().__init__(params or {})
        self._flag = flag

    def __missing__(self, key):
        if key == "batch_size":
            raise ValueError(f'params["batch_size"] is read, but TPUEstimator({self._flag}=None) gives none: set '
                             f"{self._flag}, the global batch size of that mode")
        raise KeyError(key)


def _params_of(params, mode, batch_size, **more):
    """A mode's params: the user's, with "batch_size" (or _Params saying there is none), "context" (a one-host
    TPUContext) and `more`."""
    params = dict(params or {}, context=tpu_context.TPUContext(mode), **more)
    return _Params(params, _FLAGS[mode]) if batch_size is None else dict(params, batch_size=batch_size)


def _with_batch_size(input_fn, batch_size, mode):
    """input_fn, given params["batch_size"] = batch_size and params["context"] (the signature stays its own);
    one that takes no params is refused, as tf.estimator's TPUEstimator refused it."""
    if "params" not in inspect.signature(input_fn).parameters:
        raise ValueError(f"input_fn ({getattr(input_fn, '__name__', input_fn)}) does not include params argument, "
                         'required by TPUEstimator to pass batch size as params["batch_size"]')

    @functools.wraps(input_fn)
    def with_batch_size(**kwargs):
        kwargs["params"] = _params_of(kwargs.get("params"), mode, batch_size)
        return input_fn(**kwargs)
    return with_batch_size


_FLAGS = {ModeKeys.TRAIN: "train_batch_size", ModeKeys.EVAL: "eval_batch_size", ModeKeys.PREDICT: "predict_batch_size"}
_RESERVED_PARAMS = {
    "batch_size": "TPUEstimator sets it per mode from train_batch_size, eval_batch_size and predict_batch_size",
    "context": "TPUEstimator sets it to the TPUContext of the call"}


def _checked_batch_sizes(sizes, num_towers):
    """{mode: size}, each None or a positive int (a numpy one too, as an int); the training one divisible over the
    towers (a TPU's shards)."""
    for mode, size in sizes.items():
        if size is not None and (isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer))
                                 or size < 1):
            raise ValueError(f"TPUEstimator({_FLAGS[mode]}={size!r}): a batch size must be a positive integer")
    sizes = {mode: None if size is None else int(size) for mode, size in sizes.items()}
    train = sizes[ModeKeys.TRAIN]
    if train is not None and train % num_towers:
        raise ValueError(f"TPUEstimator(train_batch_size={train}) cannot be split evenly over the {num_towers} "
                         "towers of the device plan: make it a multiple of them")
    return sizes


def _check_embedding_config(spec, config):
    """TF 2.15's checks of an embedding_config_spec off a TPU, and a line saying what becomes of it.

    Raises:
      ValueError: partition_strategy "mod", or an input pipeline other than per host.
    """
    if spec.partition_strategy == "mod":
        raise ValueError("TPUEstimator(embedding_config_spec=EmbeddingConfigSpec(partition_strategy='mod')): mod "
                         "sharding of embedding tables is not supported off a TPU (nor was it by TF 2.15); use 'div'")
    per_host = getattr(getattr(config, "tpu_config", None), "per_host_input_for_training", True)
    if not (per_host is True or (not isinstance(per_host, bool) and per_host in (
            InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.PER_HOST_V2))):  # (True is PER_HOST_V1's flag)
        raise ValueError(f"TPUEstimator(embedding_config_spec=...): TPUConfig(per_host_input_for_training="
                         f"{per_host!r}): TPU embeddings take PER_HOST_V1 or PER_HOST_V2 only")
    logging.info("TPUEstimator(use_tpu=False, embedding_config_spec=...): the embedding columns' tables train as "
                 "ordinary variables, by model_fn's optimizer, as TF 2.15's TPUEstimator ran them off a TPU (%r is "
                 "not used)", spec.optimization_parameters)


class TPUEstimator(Estimator):
    """tf.estimator.tpu.TPUEstimator with use_tpu=False (see the module); use_tpu=True is refused. An
    embedding_config_spec (common.tpu.embedding) is checked and its tables train as ordinary variables, by
    model_fn's optimizer, as TF 2.15 ran them off a TPU."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True, train_batch_size=None,
                 eval_batch_size=None, predict_batch_size=None, batch_axis=None, eval_on_tpu=True,
                 export_to_tpu=True, export_to_cpu=True, warm_start_from=None, embedding_config_spec=None,
                 export_saved_model_api_version=None):
        del batch_axis, eval_on_tpu, export_saved_model_api_version
        if not (export_to_tpu or export_to_cpu):
            raise ValueError("TPUEstimator: export_to_tpu and export_to_cpu cannot both be False: an export would "
                             "hold no MetaGraph")
        if use_tpu:
            raise ValueError("TPUEstimator(use_tpu=True): this project trains on CPUs and GPUs; pass use_tpu=False "
                             "and model_fn runs on the towers of the device plan")
        if embedding_config_spec is not None:
            _check_embedding_config(embedding_config_spec, config)
        for key in _RESERVED_PARAMS:
            if params and key in params:
                raise ValueError(f'TPUEstimator params must not hold "{key}": {_RESERVED_PARAMS[key]}')

        def tpu_model_fn(features, labels, mode, params, config):
            params = _params_of(params, mode, self._batch_sizes[mode], use_tpu=False)  # (TF 2.15 set use_tpu)
            spec = call_with_wanted_args(model_fn, {"features": features},
                                         {"labels": labels, "mode": mode, "params": params, "config": config})
            every_n = getattr(getattr(config, "tpu_config", None), "experimental_host_call_every_n_steps", 1)
            return spec.as_estimator_spec(every_n) if isinstance(spec, TPUEstimatorSpec) else spec

        config = config or RunConfig()
        self._log_every_n_steps = config.log_step_count_steps  # (TPUEstimator's own hook logs; see common.tpu.hooks)
        super().__init__(tpu_model_fn, model_dir=model_dir, config=config.replace(log_step_count_steps=None),
                         params=params, warm_start_from=warm_start_from)
        self._batch_sizes = _checked_batch_sizes(
            {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size, ModeKeys.PREDICT: predict_batch_size},
            self.config.device_plan.num_towers)
        self._parts.export_tag_sets = ((("serve",),) if export_to_cpu else ()) + \
            ((("serve", "tpu"),) if export_to_tpu else ())  # (the second holds the same graph: no TPU here)

    def _rate_hooks(self):
        """TPUEstimator's ExamplesPerSecondHook, every ceil(log_step_count_steps / iterations_per_loop) steps."""
        if not self._log_every_n_steps or self._batch_sizes[ModeKeys.TRAIN] is None:
            return []
        per_loop = getattr(getattr(self.config, "tpu_config", None), "iterations_per_loop", 1) or 1
        return [tpu_hooks.ExamplesPerSecondHook(self._batch_sizes[ModeKeys.TRAIN],
                                                every_n_steps=-(-self._log_every_n_steps // per_loop),
                                                write_summaries=bool(self.config.save_summary_steps))]

    def _input_fn_of(self, input_fn, mode):
        return _with_batch_size(input_fn, self._batch_sizes[mode], mode)

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        return super().train(self._input_fn_of(input_fn, ModeKeys.TRAIN), hooks=list(hooks or ()) + self._rate_hooks(),
                             steps=steps, max_steps=max_steps, saving_listeners=saving_listeners)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        return super().evaluate(self._input_fn_of(input_fn, ModeKeys.EVAL), steps=steps,
                                hooks=hooks, checkpoint_path=checkpoint_path, name=name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        return super().predict(self._input_fn_of(input_fn, ModeKeys.PREDICT),
                               predict_keys=predict_keys, hooks=hooks, checkpoint_path=checkpoint_path,
                               yield_single_examples=yield_single_examples)


def CrossShardOptimizer(optimizer, reduction=None, name=None, group_assignment=None):  # noqa: N802 (TF's name)
    """tf.tpu.CrossShardOptimizer: averaging gradients across shards is what the towers do already."""
    del reduction, name, group_assignment
    return optimizer
