"""What input_fn gives the Estimator: a checked tf.data.Dataset per mode.

The engine reads a mode's input from a DatasetSource: a function of the
optional arguments (mode, params, config, input_context) that makes a
tf.data.Dataset of (features, labels) batches, or of features alone. The
other forms tf.estimator took from input_fn (tensors, iterators, queue
runners, ...) are turned into one before the engine sees them
(common.adapters.tensor_inputs).
"""

import collections
import contextlib
import dataclasses
import inspect
import weakref
from typing import Callable

import tensorflow as tf

from common.internals import tensorflow_internals
from common.spec.model_fn import ModeKeys, call_with_wanted_args


@dataclasses.dataclass(frozen=True)
class DatasetSource:
    """Where a mode's input comes from.

    make: make(args) -> the tf.data.Dataset, args a dict of mode, params, config and input_context (each
      passed to input_fn where its signature names it).
    shards_itself: the input_fn reads its own host's share (it names `input_context`, as input_fns written
      for distribution strategies did); otherwise each host takes its shard of the dataset.
    """

    make: Callable[[dict], tf.data.Dataset]
    shards_itself: bool

    @classmethod
    def of_input_fn(cls, input_fn, to_dataset=None):
        """The source of `input_fn`: its result, which must be a tf.data.Dataset, or, given
        to_dataset(call, what) (an adapter: common.adapters.tensor_inputs.dataset_of), what that makes of
        call(), the call of input_fn."""
        def make(args):
            what = f"input_fn for {args.get('mode')}"
            call = lambda: call_with_wanted_args(input_fn, {}, args)  # noqa: E731
            if to_dataset is not None:
                return to_dataset(call, what)
            result = call()
            if not isinstance(result, tf.data.Dataset):
                raise TypeError(f"{what} must return a tf.data.Dataset, it returned a {type(result).__name__}")
            return result
        return cls(make, "input_context" in inspect.signature(input_fn).parameters)


def input_context(cluster, num_towers):
    """The tf.distribute.InputContext such an input_fn is given: a pipeline per host."""
    return tf.distribute.InputContext(num_input_pipelines=cluster.num_workers, input_pipeline_id=cluster.worker_index,
                                      num_replicas_in_sync=cluster.num_workers * num_towers)


def dataset_for(source, mode, optional_args):
    """The source's dataset (a DatasetSource, or an input_fn returning a Dataset) for `mode`; optional_args
    (params, config, input_context) are passed when input_fn's signature names them. Its elements are
    (features, labels) pairs, or features alone (labels None, as tf.estimator took them; `(features,)` too);
    PREDICT drops labels when the dataset has them."""
    source = source if isinstance(source, DatasetSource) else DatasetSource.of_input_fn(source)
    dataset = source.make(dict(optional_args, mode=mode))
    spec = dataset.element_spec
    if isinstance(spec, tuple) and len(spec) == 1:  # (features,): TensorFlow up to 1.8 read a tuple's first item
        dataset = dataset.map(lambda features: features)
        spec = dataset.element_spec
    if isinstance(spec, (tuple, list)) and len(spec) != 2:
        raise ValueError(f"input_fn for {mode} must yield (features, labels) pairs or features alone, got a "
                         f"tuple of {len(spec)}: {spec}")
    has_labels = isinstance(spec, tuple)
    if mode == ModeKeys.PREDICT and has_labels:
        return dataset.map(lambda features, labels: features)
    if mode != ModeKeys.PREDICT and not has_labels:
        return dataset.map(lambda features: (features, None))
    return dataset


def dataset_for_run(source, mode, params, config):
    """The source's dataset (a DatasetSource, or an input_fn returning a Dataset) for `mode` under RunConfig
    `config`: this host's share of the training data, and, under a RunConfig strategy, a tower's worth of
    elements per step. With tf_random_seed, input_fn's unseeded random ops (a shuffle) are seeded from it, as
    each tf.estimator call's graph seed seeded them."""
    cluster, num_towers = config.cluster, config.device_plan.num_towers
    optional = {"params": params, "config": config, "input_context": input_context(cluster, num_towers)}
    if config.tf_random_seed is not None:  # as TF1's graph seed fixed each call's shuffle (and other random ops)
        tf.random.set_seed(config.tf_random_seed)
    source = source if isinstance(source, DatasetSource) else DatasetSource.of_input_fn(source)
    dataset = dataset_for(source, mode, optional)
    if mode == ModeKeys.TRAIN and not source.shards_itself:
        dataset = cluster.shard(dataset)
    if config.batch_per_replica:
        dataset = merge_replica_batches(dataset, num_towers)
    return steady_autotuning(dataset)


def steady_autotuning(dataset):
    """The dataset with tf.data's autotuning off unless input_fn set it.

    Measured on a 2-core machine (benchmarks/premade_throughput.py),
    autotuning left on put a third to a half of the training processes at a
    fixed ~280 steps/sec whatever the step cost (72k examples/sec where the
    others ran 100-125k, even with a cached input), and spent a tenth of the
    input pipeline's time sizing string tensors; off, every process ran at
    the fast rate. Off, tf.data no longer adds a prefetch at the end, so one
    is added here to a dataset that does not end in one (the step and the next
    batch still overlap); and
    a map's num_parallel_calls=AUTOTUNE runs min(16, CPU cores) calls (where
    autotuning starts) and prefetch(AUTOTUNE) still grows its buffer. An
    input_fn that sets options.autotune.enabled keeps what it set.
    """
    if dataset.options().autotune.enabled is not None:
        return dataset
    if not _ends_in_prefetch(dataset):
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)


def _ends_in_prefetch(dataset):
    while type(dataset).__name__ == "_OptionsDataset":  # (with_options wraps without a transformation)
        dataset = tensorflow_internals.input_dataset(dataset)  # (tf.data has no public walk of a pipeline)
    return type(dataset).__name__ == "_PrefetchDataset"


def _static_batch_size(dataset):
    sizes = {leaf.shape[0] for leaf in tf.nest.flatten(dataset.element_spec) if leaf.shape.rank}
    return sizes.pop() if len(sizes) == 1 and None not in sizes else None


def merge_replica_batches(dataset, num_towers):
    """A dataset whose elements are num_towers of `dataset`'s elements end to end.

    Under a distribution strategy tf.estimator gave each replica its own
    element of the input_fn's dataset (the batch size was per replica); the
    towers here split one batch, so a step takes num_towers elements. The
    elements are cut again at num_towers times the first element's size, so a
    short last element only shortens the last step.
    """
    if num_towers == 1:
        return dataset
    per_replica = _static_batch_size(dataset)
    if per_replica is None:
        first = next(iter(dataset), None)
        if first is None:
            return dataset
        per_replica = int(tf.shape(tf.nest.flatten(first)[0])[0])
    return dataset.unbatch().batch(per_replica * num_towers)


def _batchless(spec):
    """A per-tower shard's spec: the batch dimension unknown."""
    if getattr(spec, "shape", None) is not None and spec.shape.rank:
        return tf.TensorSpec([None] + spec.shape.as_list()[1:], spec.dtype)
    return spec


def element_signature(dataset):
    """The signature a step traced ahead of its loop is traced with: the dataset's (or an iterator's) element as
    the loop's iterator gives it (a missing part, such as labels of none, None rather than its NoneTensorSpec)."""
    return tf.nest.map_structure(lambda spec: None if spec.value_type.__name__ == "NoneTensor" else spec,
                                 dataset.element_spec)


def global_batch_size(dataset):
    """The batch size of the dataset's elements where it is fixed (drop_remainder), else None."""
    first = tf.nest.flatten(dataset.element_spec)[0]
    return first.shape[0] if first.shape.rank else None


def shard_signature(dataset):
    """The signature model_fn is probed with: the dataset's element, batch size unknown."""
    return tf.nest.map_structure(_batchless, dataset.element_spec)


def _is_string(spec):
    return getattr(spec, "dtype", None) == tf.string


# (key, weak reference to the tensor) of the string features model_fn was given in its latest traces
_STRING_FEATURES_SEEN = collections.deque(maxlen=256)


def seen_by_model_fn(features):
    """Records the string feature tensors model_fn is given as it is traced: a failure on strings then names
    those model_fn used (the tensors its graph consumes), not every string feature of the input."""
    if isinstance(features, dict):
        for key, tensor in features.items():
            if isinstance(tensor, tf.Tensor) and tensor.dtype == tf.string and hasattr(tensor, "consumers"):
                _STRING_FEATURES_SEEN.append((key, weakref.ref(tensor)))


def _string_feature_uses():
    """key -> how model_fn's graph uses the string feature, for those of the traces still alive: 2 cast to a
    number (the usual failure), 1 read otherwise (a lookup, a hash), 0 not at all."""
    uses = {}
    for key, reference in _STRING_FEATURES_SEEN:
        tensor = reference()
        if tensor is not None:
            consumers = tensor.consumers()
            use = 2 if any(op.type == "Cast" for op in consumers) else 1 if consumers else 0
            uses[key] = max(uses.get(key, 0), use)
    return uses


def string_input_note(error, element_spec, uses=None):
    """What to tell the owner when a step failed on strings that input_fn gave (labels first, then feature
    keys: those `uses` (_string_feature_uses) says model_fn used most like numbers, else all), or None: "Cast
    string to int64 is not supported [[node tower_0/Cast]]" does not say they were the labels."""
    text = str(getattr(error, "message", None) or error)
    if "string" not in text.lower():
        return None
    features, labels = element_spec if isinstance(element_spec, tuple) and len(element_spec) == 2 \
        else (element_spec, None)
    lines = [line.strip() for line in text.splitlines() if line.strip()
             and not line.strip().startswith(("[[", "File ", "in user code"))]
    first_line = (lines[-1] if lines else type(error).__name__).rstrip(".")
    if "label" in first_line.lower():  # a message that names the labels says enough
        return None
    if labels is not None and all(_is_string(spec) for spec in tf.nest.flatten(labels)):
        return (f"the labels input_fn gives are strings (dtype string), and model_fn uses them as numbers: "
                f"{first_line}. Map them to integer class ids in input_fn (a tf.lookup.StaticHashTable), or give "
                "a premade estimator label_vocabulary=[...]")
    strings = sorted(key for key, spec in (features.items() if isinstance(features, dict) else []) if _is_string(spec))
    uses = {key: (uses or {}).get(key, 0) for key in strings}
    keys = [key for key in strings if uses[key] == max(uses.values(), default=0)]
    if keys or _is_string(features):
        named = f"the feature(s) {', '.join(repr(k) for k in keys)}" if keys else "the features"
        return (f"{named} input_fn gives are strings (dtype string), and model_fn "
                f"uses them as numbers: {first_line}. Parse or look them up in input_fn (tf.strings.to_number, "
                "a lookup table, a categorical feature column)")
    return None


# What begins the message of a check the framework makes on input_fn's values inside a step (input_check).
INPUT_CHECK = "input_fn's data: "


def input_check(tensor, condition, message, offending=None):
    """`tensor`, once `condition` (a boolean tensor) holds; where it does not, the step fails and
    naming_bad_inputs raises a ValueError with `message` (what is wrong, naming the column or feature), followed
    by the first values of `offending` (a tensor of the values at fault), if given."""
    data = [INPUT_CHECK + message] + ([offending[:5]] if offending is not None else [])
    with tf.control_dependencies([tf.debugging.Assert(condition, data)]):
        return tf.identity(tensor)


@contextlib.contextmanager
def naming_bad_inputs(element_spec):
    """Re-raises a failure on input_fn's strings (at tracing or at run time) as a TypeError that says which
    input was strings (string_input_note), and a failed input_check as a ValueError with its message."""
    try:
        yield
    except (TypeError, ValueError, tf.errors.UnimplementedError, tf.errors.InvalidArgumentError) as error:
        text = str(getattr(error, "message", error)).replace("\\'", "'")  # (Assert's data comes escaped)
        if isinstance(error, tf.errors.InvalidArgumentError) and INPUT_CHECK in text:  # "[message] [values]"
            checked = text.split(INPUT_CHECK, 1)[1].splitlines()[0].replace("] [", " ", 1).rstrip("]")
            raise ValueError(INPUT_CHECK + checked) from error
        note = string_input_note(error, element_spec, _string_feature_uses())
        if note is None:
            raise
        raise TypeError(note) from error
