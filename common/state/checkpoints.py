"""Checkpoints keyed by stable variable names, read and restored.

Keras 3 models do not give tf.train.Checkpoint a complete object graph (a
Functional model's kernels are reachable only through its optimizer), so
the Estimator checkpoints a flat dict, in TF1's name-keyed format (what
tf.estimator's Saver wrote, and what tf.compat.v1.train.init_from_checkpoint
and TF1 code read): "<module>/<keras path>" for a module's variables,
"model_fn/<keras path>" for layers model_fn builds, the full TF1 name for
get_variable's ("bert/encoder/layer_0/attention/self/query/kernel"),
"optimizer/<slot>" for a Keras optimizer's state, TF1 slot names for a TF1
optimizer's, and "global_step". Those names are what `get_variable_value`,
warm-start regexes and the different-model check speak of. A checkpoint
records which of its names are optimizer state (OPTIMIZER_STATE). The
object-graph checkpoints of earlier versions ("vars/<escaped name>/...")
are still read.

Restoring checks every name and shape and reads every tensor before it
assigns any, so a checkpoint of a different model, or one cut short,
changes nothing. Writing and finding checkpoints in a model_dir is
common.state.checkpoint_store's; warm start, common.state.warm_start's.
"""

import contextlib
import logging
import os
import re

import tensorflow as tf

from common.internals import tensorflow_internals
from common.state import part_slots, tf_estimator_names

CHECKPOINT_NAME = "model.ckpt"
GLOBAL_STEP = "global_step"
# What tf.estimator's own services kept in its checkpoints beside the model: the flag its early-stopping hooks
# raised. A model dir tf.estimator wrote resumes here without it.
TF_ESTIMATOR_BOOKKEEPING = ("signal_early_stopping/STOP",)
OPTIMIZER_PREFIX = "optimizer/"
MODEL_FN_SCOPE = "model_fn"  # the variables model_fn builds itself (common.served_variables)
RESERVED_MODULE_NAMES = ("optimizer", GLOBAL_STEP, MODEL_FN_SCOPE)
ROOT = "vars"  # (the object-graph format of earlier versions: ROOT/<escaped name>/.ATTRIBUTES/VARIABLE_VALUE)
INPUT_STATE = "_common_input"  # the input pipeline's state (TF1's Saver files it as "_common_input_STATE")
_ESCAPED_INPUT_STATE = "input"  # its name in the object-graph format of earlier versions
OPTIMIZER_STATE = "_common_optimizer_state"  # a string: the optimizer-state names of the checkpoint, one a line
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_PATH_CLEANUP = re.compile(r"[^A-Za-z0-9_./-]")
_ESCAPED = re.compile(r"\.([.S])")
CHECKPOINT_FILE = re.compile(rf"^{re.escape(CHECKPOINT_NAME)}-(\d+)\.(index|data-(\d+)-of-(\d+))$")
_PARTITION = re.compile(r"/t_\d+$")  # (the partition a v1 premade's TF1 optimizer saved a slot under)
_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")


class CheckpointMismatchError(ValueError):
    """A checkpoint whose variables are not the model's (another model's model dir): nothing was restored.

    Args:
      message: what differs, for the user.
      path: the checkpoint's path.
      differences: how it differs: the names missing on either side, the shapes that differ.
    """

    def __init__(self, message, path=None, differences=None):
        super().__init__(message)
        self.path = path
        self.differences = differences


class CheckpointDamagedError(ValueError):
    """No checkpoint in the model dir loads: their files are missing, cut short or unreadable (the model dir is
    left as it is; a damaged newest checkpoint alone is passed over with a warning)."""


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written: disk full, read-only, over quota."""


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _unescape(key):
    """_escape undone left to right, so "a.Sb" (escaped "a..Sb") stays "a.Sb"."""
    return _ESCAPED.sub(lambda match: "." if match.group(1) == "." else "/", key)


def checkpoint_key(name, escaped=False):
    """The key a variable is saved under: its name (the object-graph format of earlier versions: escaped)."""
    return f"{ROOT}/{_escape(name)}{_SUFFIX}" if escaped else name


def _escaped_format(keys):
    return any(key.startswith(ROOT + "/") and key.endswith(_SUFFIX) for key in keys)


def _is_input_state(key):
    return key.startswith(INPUT_STATE + "_STATE")


def module_variable_name(module_name, variable):
    """The stable name of a module's variable: "<module>/<Keras path>"."""
    path = getattr(variable, "path", None) or variable.name.split(":")[0]
    return f"{module_name}/{_PATH_CLEANUP.sub('_', path)}"


def named_state(global_step, model_variables, optimizer=None, made_in_model_fn=None):
    """name -> tf.Variable of everything a checkpoint holds: the global step,
    the model's TrackedVariables and, when given, the optimizer's state (the
    spec's Keras optimizer's, and `made_in_model_fn`: name -> variable of the
    optimizers model_fn made itself)."""
    named = {GLOBAL_STEP: global_step}
    named.update({t.name: t.variable for t in model_variables})
    for name, variable in (made_in_model_fn or {}).items():
        if name in named:
            raise ValueError(f"the optimizer state {name!r} has the name of a model variable")
        named[name] = variable
    if optimizer is not None:
        shadows = _unused_by_loss_scaling(optimizer)
        for variable in optimizer.variables:
            if id(variable) in shadows:
                continue
            name = OPTIMIZER_PREFIX + variable.path.split("/", 1)[-1]
            if name in named:
                raise ValueError(
                    f"two optimizer slots are both named {name!r}: two model variables share the Keras path it "
                    "comes from (two modules holding layers of the same names?); give their layers distinct names")
            named[name] = getattr(variable, "value", variable)
    return named


class Slices:
    """A variable a TF1 program partitioned (common.tf1_runtime.partitioned) as checkpoints hold it: one value under
    its whole name; its parts, which live apart, each assign and save their slice of it."""

    def __init__(self, parts):
        self.parts = sorted(parts, key=lambda part: tensorflow_internals.save_slice_info(part).var_offset)
        self.shape = tf.TensorShape(tensorflow_internals.save_slice_info(self.parts[0]).full_shape)
        self.dtype = self.parts[0].dtype
        self.trainable = self.parts[0].trainable

    def assign(self, value):
        for part in self.parts:
            info = tensorflow_internals.save_slice_info(part)
            part.assign(tf.slice(value, info.var_offset, info.var_shape))


def saved_name(name, variable):
    """The name the checkpoints hold `variable` under: its own, or a part's whole variable's."""
    info = tensorflow_internals.save_slice_info(variable)
    return name if info is None else info.full_name


def saved_names(tracked):
    """The names the checkpoints hold these TrackedVariables under, in order, each once."""
    return list(dict.fromkeys(saved_name(t.name, t.variable) for t in tracked))


def saved_form(variables):
    """name -> variable as the checkpoints hold them: the parts of a partitioned variable as Slices under its
    whole name, every other variable as itself."""
    found, parts = {}, {}
    for name, variable in variables.items():
        if tensorflow_internals.save_slice_info(variable) is None:
            found[name] = variable
        else:
            parts.setdefault(saved_name(name, variable), []).append(variable)
    found.update({name: Slices(group) for name, group in parts.items()})
    return found


def _unused_by_loss_scaling(optimizer):
    """ids of a LossScaleOptimizer's own iteration and learning-rate variables:
    Keras reads its inner optimizer's instead, whose state holds those names."""
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is None:
        return set()
    inner_ids = {id(v) for v in inner.variables}
    return {id(v) for v in optimizer.variables
            if id(v) not in inner_ids and v.path.split("/", 1)[-1] in ("iteration", "learning_rate")}


def resolve(path, what="checkpoint"):
    """A checkpoint prefix from a prefix or a directory; ValueError if none."""
    if path and tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
    elif path and tf.io.gfile.exists(path + ".index"):
        return path
    raise ValueError(f"{what}: no checkpoint found at {path!r}")


def _listed(path):
    """key -> shape of every tensor in checkpoint `path`."""
    try:
        return dict(tf.train.list_variables(path))
    except (tf.errors.OpError, ValueError, OSError) as error:
        raise CheckpointDamagedError(f"{path} cannot be read ({first_line(error)})") from error


def variable_shapes(path):
    """name -> shape of every variable the framework saved in checkpoint `path`."""
    listed = _listed(path)
    if _escaped_format(listed):
        return {_unescape(key[len(ROOT) + 1:-len(_SUFFIX)]): list(shape) for key, shape in listed.items()
                if key.startswith(ROOT + "/") and key.endswith(_SUFFIX)}
    return {key: list(shape) for key, shape in listed.items()
            if key not in (OPTIMIZER_STATE, _OBJECT_GRAPH) and not _is_input_state(key)}


def optimizer_state_names(path):
    """The names checkpoint `path` records as optimizer state (none in one of an earlier version)."""
    if OPTIMIZER_STATE not in _listed(path):
        return set()
    return set(read_values(path, [OPTIMIZER_STATE])[OPTIMIZER_STATE].decode().split("\n")) - {""}


def read_variable(path, name):
    shapes = variable_shapes(path)
    if name not in shapes:
        raise ValueError(
            f"no variable {name!r} in checkpoint {path}; it holds: {', '.join(sorted(shapes))}"
        )
    return read_values(path, [name])[name]


def step_of(path):
    """The global step a checkpoint was saved at: the number in its name
    (the store names each after its step), else the saved global step."""
    match = CHECKPOINT_FILE.match(os.path.basename(path) + ".index")
    if match:
        return int(match.group(1))
    return int(read_values(path, [GLOBAL_STEP])[GLOBAL_STEP])


def global_step_in(model_dir):
    """The global step of model_dir's newest checkpoint, 0 with none (tf.estimator's private
    _load_global_step_from_checkpoint_dir, which TPU programs called to resume their train-and-eval loops)."""
    latest = tf.train.latest_checkpoint(model_dir)
    return step_of(latest) if latest else 0


def first_line(error):
    """The error's type and first line, without TensorFlow's {{function_node ...}} prefix."""
    text = _FUNCTION_NODE.sub("", getattr(error, "message", None) or str(error)).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def read_values(path, names):
    """{name: numpy value}, every one read before the caller assigns any (a name may be PerPartNames: the slot
    tf.estimator 2.15 saved per part, read whole); CheckpointDamagedError naming the checkpoint when its files
    are missing, cut short or unreadable."""
    try:
        reader = tf.train.load_checkpoint(path)
        shapes = reader.get_variable_to_shape_map()
        escaped = _escaped_format(shapes)
        values = {}
        for name in names:
            if isinstance(name, part_slots.PerPartNames):
                values[name] = part_slots.read_whole(path, name, shapes[name[0]],
                                                     reader.get_variable_to_dtype_map()[name[0]])
            else:
                values[name] = reader.get_tensor(checkpoint_key(name, escaped and name != OPTIMIZER_STATE))
        return values
    except (tf.errors.OpError, IndexError, ValueError, OSError) as error:
        raise CheckpointDamagedError(f"{path} cannot be read ({first_line(error)})") from error


def describe(names, limit=10):
    """The first `limit` names, model variables before optimizer state."""
    names = sorted(names, key=lambda name: (name.startswith(OPTIMIZER_PREFIX), name))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def missing_and_reshaped(saved, variables, names):
    """Of `names`, those the checkpoint (`saved`: name -> shape) lacks, and those
    whose shape there is not the variable's."""
    missing = [n for n in names if n not in saved]
    reshaped = [n for n in names if n in saved and saved[n] != variables[n].shape.as_list()]
    return missing, reshaped


def tf_estimator_renames(path, names):
    """{project name: checkpoint name} for a checkpoint tf.estimator wrote (common.state.tf_estimator_names);
    empty for one of this project's."""
    saved = variable_shapes(path)
    if not any(name not in saved for name in names):
        return {}
    return tf_estimator_names.saved_names(saved, names)


def carried_state(path, variables, renamed):
    """{name: value} of what a tf.estimator checkpoint holds that the model neither has nor reads (a Keras 2
    optimizer's hyperparameters, "training/Adagrad/decay"): written back unchanged with every save, so
    tf.estimator can load the model dir again."""
    saved = variable_shapes(path)
    used = set(variables) | {old for saved_name in renamed.values() for old in part_slots.each_name(saved_name)}
    names = [name for name in tf_estimator_optimizer_state(saved, variables) if name not in used]
    return read_values(path, names) if names else {}


def check_compatible(path, variables, required, renamed=None, ignored=(), partial=False):
    """Raises CheckpointMismatchError unless every name in `required` is in the
    checkpoint (under `renamed`'s name where given) with the variable's shape, and the checkpoint's model
    variables are the model's (optimizer state and the global step may be absent; tf.estimator's
    bookkeeping and the names in `ignored` are ignored). partial: the checkpoint may hold model variables
    the model lacks (a mode's graph that builds part of the model); returns those names."""
    renamed = renamed or {}
    saved = variable_shapes(path)
    saved.update({name: saved[part_slots.each_name(old)[0]] for name, old in renamed.items()})
    read_as_another = {old for saved_name in renamed.values() for old in part_slots.each_name(saved_name)}
    missing, reshaped = missing_and_reshaped(saved, variables, required)
    reshaped = [f"{n} (checkpoint {saved[n]}, model {variables[n].shape.as_list()})" for n in reshaped]
    optimizer_state = optimizer_state_names(path) or tf_estimator_optimizer_state(saved, variables)
    extra = [n for n in saved if n not in variables and not n.startswith(OPTIMIZER_PREFIX) and n != GLOBAL_STEP
             and n not in optimizer_state and n not in TF_ESTIMATOR_BOOKKEEPING and n not in read_as_another
             and n not in ignored]
    if partial:
        unread, extra = extra, []
    if missing or extra or reshaped:
        parts = []
        if reshaped:
            parts.append(f"shapes differ: {describe(reshaped)}")
        if missing:
            parts.append(f"not in the checkpoint: {describe(missing)}")
        if extra:
            parts.append(f"in the checkpoint but not in the model: {describe(extra)}")
        raise CheckpointMismatchError(
            f"checkpoint {path} was written by a different model; {'; '.join(parts)}. Use another model_dir, or "
            "remove it to start over.", path, "; ".join(parts))
    return unread if partial else []




def tf_estimator_optimizer_state(saved, variables):
    """The names of a checkpoint tf.estimator wrote (it records no OPTIMIZER_STATE) that are optimizer state:
    a TF1 optimizer's slots ("<variable>/Momentum", "<variable>/Adam_1") and accumulators ("beta1_power"), a
    Keras 2 optimizer's state under "training/" (the premade estimators') or in a Keras object graph
    (model_to_estimator's); the model's own names excepted."""
    model = {name for name in variables if name != GLOBAL_STEP} | {
        name[len(MODEL_FN_SCOPE) + 1:] for name in variables if name.startswith(MODEL_FN_SCOPE + "/")}
    found = set()
    for name in saved:
        if name in variables:
            continue
        parent = name.rsplit("/", 1)[0]
        partition = _PARTITION.search(parent)
        by_partition = partition is not None and parent[:partition.start()] in model  # (a v1 premade's slots)
        if parent in model or by_partition or name.startswith((tf_estimator_names.KERAS2_SCOPE, "optimizer/")) \
                or "/.OPTIMIZER_SLOT/" in name or tf_estimator_names.TF1_NON_SLOT.match(name.rsplit("/", 1)[-1]):
            found.add(name)
    return found


def restore(path, variables, names, ignored=(), partial=False):
    """Assigns the checkpoint's values to `variables[name]` for each name, all
    or nothing: the names and shapes are checked and every value is read
    before the first is assigned (the checkpoint's names in `ignored` are left
    unread). partial: the model may lack some of the checkpoint's variables (evaluation, prediction and
    export of a mode that builds part of the model, as TF1's Saver restored what the graph had): they are
    left unread, and said so once. A checkpoint tf.estimator wrote is read under its own names
    (tf_estimator_renames); returns those renames."""
    renamed = tf_estimator_renames(path, names)
    unread = check_compatible(path, variables, names, renamed, ignored, partial)
    if unread:
        tf.compat.v1.logging.info("%d variable(s) of %s are not built in this mode and were left unread: %s",
                                  len(unread), path, describe(unread, limit=3))
    values = read_values(path, [renamed.get(name, name) for name in names])
    for name in names:
        variables[name].assign(values[renamed.get(name, name)])
    return renamed


def restore_input(path, iterator):
    """Restores a training iterator saved with checkpoint `path`; False if it holds none."""
    listed = _listed(path)
    escaped = _escaped_format(listed)
    if not any(key.startswith(_ESCAPED_INPUT_STATE + "/") if escaped else _is_input_state(key) for key in listed):
        return False
    if escaped:
        tf.train.Checkpoint(**{_ESCAPED_INPUT_STATE: iterator}).read(path).expect_partial()
    else:
        with tf1_saver():
            tf.compat.v1.train.Saver({INPUT_STATE: iterator}).restore(None, path)
    return True


class _SaverNotice(logging.Filter):
    def filter(self, record):
        return not record.getMessage().startswith("Saver is deprecated")


@contextlib.contextmanager
def tf1_saver():
    """While entered, TensorFlow's notice that its TF1 Saver is deprecated (said each time one is made eagerly)
    is not logged: this module writes and reads tf.estimator's name-keyed checkpoints with it on purpose, and
    the notice, meant for a program's own Saver, would open every training log."""
    notice = _SaverNotice()
    tf.get_logger().addFilter(notice)
    try:
        yield
    finally:
        tf.get_logger().removeFilter(notice)
