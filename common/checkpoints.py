"""Checkpoints keyed by stable variable names, and warm start.

Keras 3 models do not give tf.train.Checkpoint a complete object graph (a
Functional model's kernels are reachable only through its optimizer), so
the Estimator checkpoints a flat dict: "<module>/<keras path>" for model
variables, "optimizer/<slot>" for optimizer state and "global_step". Those
names are what `get_variable_value`, warm-start regexes and the
different-model check speak of.

Saving goes through tf.train.CheckpointManager (files "model.ckpt-<step>",
written under a temporary name and renamed by TensorFlow, the `checkpoint`
state file written atomically). Restoring checks every name and shape and
reads every tensor before it assigns any, so a checkpoint of a different
model, or one cut short, changes nothing. The model_dir's checkpoints are
found by listing its files (the state file is a hint, rewritten when it is
damaged); a restore takes the newest one that loads, and refuses a dir
where none does rather than train over it from step 0.
"""

import dataclasses
import os
import re
import shutil
from typing import Dict, Mapping

import tensorflow as tf
from absl import logging

from common import atomic

CHECKPOINT_NAME = "model.ckpt"
GLOBAL_STEP = "global_step"
OPTIMIZER_PREFIX = "optimizer/"
MODEL_FN_SCOPE = "model_fn"  # the variables model_fn builds itself (common.served_variables)
RESERVED_MODULE_NAMES = ("optimizer", GLOBAL_STEP, MODEL_FN_SCOPE)
_ROOT = "vars"
_INPUT = "input"
_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_PATH_CLEANUP = re.compile(r"[^A-Za-z0-9_./-]")
_ESCAPED = re.compile(r"\.([.S])")
_CHECKPOINT_FILE = re.compile(rf"^{re.escape(CHECKPOINT_NAME)}-(\d+)\.(index|data-(\d+)-of-(\d+))$")
_STATE_FILE = "checkpoint"
_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")


class CheckpointMismatchError(ValueError):
    """A checkpoint whose variables are not the model's."""


class CheckpointDamagedError(ValueError):
    """A checkpoint whose files are missing, cut short or unreadable."""


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written: disk full, read-only, over quota."""


def _bytes(count):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _unescape(key):
    """_escape undone left to right, so "a.Sb" (escaped "a..Sb") stays "a.Sb"."""
    return _ESCAPED.sub(lambda match: "." if match.group(1) == "." else "/", key)


def checkpoint_key(name):
    return f"{_ROOT}/{_escape(name)}{_SUFFIX}"


def module_variable_name(module_name, variable):
    """The stable name of a module's variable: "<module>/<Keras path>"."""
    path = getattr(variable, "path", None) or variable.name.split(":")[0]
    return f"{module_name}/{_PATH_CLEANUP.sub('_', path)}"


def named_state(global_step, model_variables, optimizer=None):
    """name -> tf.Variable of everything a checkpoint holds: the global step,
    the model's TrackedVariables and, when given, the optimizer's state."""
    named = {GLOBAL_STEP: global_step}
    named.update({t.name: t.variable for t in model_variables})
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


def variable_shapes(path):
    """name -> shape of every variable the framework saved in checkpoint `path`."""
    try:
        listed = tf.train.list_variables(path)
    except (tf.errors.OpError, ValueError, OSError) as error:
        raise CheckpointDamagedError(f"{path} cannot be read ({_first_line(error)})") from error
    shapes = {}
    for key, shape in listed:
        if key.startswith(_ROOT + "/") and key.endswith(_SUFFIX):
            shapes[_unescape(key[len(_ROOT) + 1:-len(_SUFFIX)])] = list(shape)
    return shapes


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
    match = _CHECKPOINT_FILE.match(os.path.basename(path) + ".index")
    if match:
        return int(match.group(1))
    return int(tf.train.load_checkpoint(path).get_tensor(checkpoint_key(GLOBAL_STEP)))


def _first_line(error):
    """The error's type and first line, without TensorFlow's {{function_node ...}} prefix."""
    text = _FUNCTION_NODE.sub("", getattr(error, "message", None) or str(error)).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def read_values(path, names):
    """{name: numpy value}, every one read before the caller assigns any;
    CheckpointDamagedError naming the checkpoint when its files are missing,
    cut short or unreadable."""
    try:
        reader = tf.train.load_checkpoint(path)
        return {name: reader.get_tensor(checkpoint_key(name)) for name in names}
    except (tf.errors.OpError, IndexError, ValueError, OSError) as error:
        raise CheckpointDamagedError(f"{path} cannot be read ({_first_line(error)})") from error


def _describe(names, limit=10):
    """The first `limit` names, model variables before optimizer state."""
    names = sorted(names, key=lambda name: (name.startswith(OPTIMIZER_PREFIX), name))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def check_compatible(path, variables, required):
    """Raises CheckpointMismatchError unless every name in `required` is in the
    checkpoint with the variable's shape, and the checkpoint's model variables
    are the model's (optimizer state and the global step may be absent)."""
    saved = variable_shapes(path)
    expected = {name: variables[name].shape.as_list() for name in required}
    missing = [n for n in expected if n not in saved]
    extra = [n for n in saved if n not in variables
             and not n.startswith(OPTIMIZER_PREFIX) and n != GLOBAL_STEP]
    reshaped = [f"{n} (checkpoint {saved[n]}, model {expected[n]})"
                for n in expected if n in saved and saved[n] != expected[n]]
    if missing or extra or reshaped:
        parts = []
        if reshaped:
            parts.append(f"shapes differ: {_describe(reshaped)}")
        if missing:
            parts.append(f"not in the checkpoint: {_describe(missing)}")
        if extra:
            parts.append(f"in the checkpoint but not in the model: {_describe(extra)}")
        raise CheckpointMismatchError(
            f"checkpoint {path} was written by a different model; "
            + "; ".join(parts)
            + ". Use another model_dir, or remove it to start over."
        )


def restore(path, variables, names):
    """Assigns the checkpoint's values to `variables[name]` for each name, all
    or nothing: the names and shapes are checked and every value is read
    before the first is assigned."""
    check_compatible(path, variables, names)
    values = read_values(path, names)
    for name in names:
        variables[name].assign(values[name])


def restore_input(path, iterator):
    """Restores a training iterator saved with checkpoint `path`; False if it holds none."""
    if not any(key.startswith(_INPUT + "/") for key, _ in tf.train.list_variables(path)):
        return False
    tf.train.Checkpoint(**{_INPUT: iterator}).read(path).expect_partial()
    return True


@dataclasses.dataclass
class WarmStartSettings:
    """Initialize matching variables from another model's checkpoint.

    vars_to_warm_start, as tf.estimator read it: a regex matched (re.match)
    against the names of the trainable model variables, e.g. "backbone/" to
    take a backbone and leave a new head alone; a list of regexes, matched
    against every model variable (batch-norm statistics too); None: none.
    """

    ckpt_to_initialize_from: str
    vars_to_warm_start: object = ".*"


def _warm_start_names(vars_to_warm_start, model_names, trainable_names):
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [n for n in trainable_names if pattern.match(n)]
    patterns = [re.compile(p) for p in vars_to_warm_start]
    return [n for n in model_names if any(p.match(n) for p in patterns)]


def warm_start(settings, variables: Mapping[str, tf.Variable], model_names, trainable_names):
    """Copies the matched model variables from the settings' checkpoint."""
    path = resolve(settings.ckpt_to_initialize_from, "warm_start_from")
    names = _warm_start_names(settings.vars_to_warm_start, model_names, trainable_names)
    saved = variable_shapes(path)
    missing = [n for n in names if n not in saved]
    if missing:
        raise CheckpointMismatchError(
            f"warm start from {path}: variables matching {settings.vars_to_warm_start!r} "
            f"are not in that checkpoint: {_describe(missing)}"
        )
    reshaped = [n for n in names if saved[n] != variables[n].shape.as_list()]
    if reshaped:
        raise CheckpointMismatchError(
            f"warm start from {path}: shapes differ for {_describe(reshaped)}"
        )
    reader = tf.train.load_checkpoint(path)
    for name in names:
        variables[name].assign(reader.get_tensor(checkpoint_key(name)))
    logging.info("Warm-started %d variable(s) from %s", len(names), path)
    return names


class CheckpointStore:
    """The model_dir's checkpoints: save with rotation, find the latest."""

    def __init__(self, model_dir, max_to_keep=5, keep_every_n_hours=10000.0):
        self.model_dir = model_dir
        self._max_to_keep = max_to_keep or None
        self._keep_hours = keep_every_n_hours
        self._manager = None
        self._names = None

    def listed(self):
        """[(step, prefix)] of every model.ckpt-<step> with a file in model_dir,
        newest first, found by listing the files: the `checkpoint` state file
        is only a hint, and a damaged one does not hide a checkpoint."""
        if not self.model_dir or not tf.io.gfile.isdir(self.model_dir):
            return []
        steps = set()
        for name in tf.io.gfile.listdir(self.model_dir):
            match = _CHECKPOINT_FILE.match(name)
            if match:
                steps.add(int(match.group(1)))
        return [(step, os.path.join(self.model_dir, f"{CHECKPOINT_NAME}-{step}"))
                for step in sorted(steps, reverse=True)]

    @staticmethod
    def is_complete(prefix):
        """Whether the index and every data shard it implies exist (no tensor is read)."""
        if not tf.io.gfile.exists(prefix + ".index"):
            return False
        shards = tf.io.gfile.glob(prefix + ".data-*-of-*")
        if not shards:
            return False
        total = int(shards[0].rsplit("-of-", 1)[1])
        return all(tf.io.gfile.exists(f"{prefix}.data-{i:05d}-of-{total:05d}") for i in range(total))

    def latest(self):
        """The newest checkpoint whose files are all there, or None."""
        for _, prefix in self.listed():
            if self.is_complete(prefix):
                return prefix
        return None

    def restore_newest(self, restore):
        """Calls restore(prefix) on the newest checkpoint that loads and returns
        its prefix; None when model_dir holds no checkpoint file.

        A checkpoint that raises CheckpointDamagedError is passed over with a
        WARNING naming it and the one used. When checkpoint files exist but
        none loads, CheckpointDamagedError lists them: training over them
        from step 0 would lose the run.
        """
        damaged = []
        for _, prefix in self.listed():
            try:
                restore(prefix)
            except CheckpointDamagedError as error:
                damaged.append(str(error))
                continue
            if damaged:
                logging.warning("Checkpoint damaged, passed over: %s. Restored %s instead.", "; ".join(damaged), prefix)
            return prefix
        if damaged:
            raise CheckpointDamagedError(
                f"no checkpoint in {self.model_dir} can be loaded: {'; '.join(damaged)}. Training would start "
                "again from step 0 over them, so it does not: restore the files from a backup, or move them "
                "away (or use another model_dir) to start over.")
        return None

    def _repair_state_file(self):
        """Rewrites the `checkpoint` state file from the listing when it cannot
        be read or names a checkpoint that is not there, so the next save
        keeps rotating the checkpoints already in model_dir."""
        try:
            state = tf.train.get_checkpoint_state(self.model_dir)
            if state is not None and self.is_complete(state.model_checkpoint_path):
                return
        except (ValueError, tf.errors.OpError):
            pass
        complete = [os.path.basename(prefix) for _, prefix in reversed(self.listed()) if self.is_complete(prefix)]
        state_path = os.path.join(self.model_dir, _STATE_FILE)
        if not complete:
            if tf.io.gfile.exists(state_path):
                tf.io.gfile.remove(state_path)
            return
        logging.warning("Rewriting %s from the checkpoints found: %s.", state_path, ", ".join(complete))
        lines = [f'model_checkpoint_path: "{complete[-1]}"'] + [f'all_model_checkpoint_paths: "{name}"'
                                                                for name in complete]
        atomic.write_text(state_path, "\n".join(lines) + "\n")

    def remove_partial_saves(self):
        """Deletes the `model.ckpt-N_temp` folders a save killed midway leaves.

        TensorFlow writes a checkpoint's shards there and removes the folder
        after merging them; a kill in between leaves it, and no later save
        of another step would clean it up.
        """
        if not self.model_dir or not tf.io.gfile.isdir(self.model_dir):
            return
        for path in tf.io.gfile.glob(os.path.join(self.model_dir, f"{CHECKPOINT_NAME}-*_temp")):
            logging.info("Removing %s, left by an interrupted save.", path)
            tf.io.gfile.rmtree(path)

    def save(self, step, variables: Dict[str, tf.Variable], iterator=None):
        """Writes model.ckpt-<step> holding `variables` (and the input iterator's
        state when given); returns its prefix."""
        key = (tuple((name, id(variable)) for name, variable in variables.items()), id(iterator))
        if self._manager is None or self._names != key:
            tf.io.gfile.makedirs(self.model_dir)
            self._repair_state_file()
            tracked = {_ROOT: dict(variables)}
            if iterator is not None:
                tracked[_INPUT] = iterator
            checkpoint = tf.train.Checkpoint(**tracked)
            self._manager = tf.train.CheckpointManager(
                checkpoint, self.model_dir, max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_hours,
                checkpoint_name=CHECKPOINT_NAME,
            )
            self._names = key
        try:
            path = self._manager.save(checkpoint_number=step)
        except (tf.errors.OpError, OSError) as error:
            self.remove_partial_saves()
            raise CheckpointWriteError(self._write_failure(step, variables, error)) from error
        logging.info("Saving checkpoints for %d into %s.", step, os.path.join(self.model_dir, CHECKPOINT_NAME))
        return path

    def _write_failure(self, step, variables, error):
        """What went wrong, with the bytes the checkpoint needs and what the disk has free."""
        needed = sum(v.shape.num_elements() * v.dtype.size for v in variables.values())
        text = (f"cannot write checkpoint {os.path.join(self.model_dir, f'{CHECKPOINT_NAME}-{step}')} "
                f"({_first_line(error)}); it needs about {_bytes(needed)}")
        try:
            text += f" and {_bytes(shutil.disk_usage(self.model_dir).free)} are free"
        except OSError:  # a remote file system
            pass
        return (text + ". The earlier checkpoints are untouched: free some space (or fix the permissions) "
                "and run the same command again to resume from the newest.")
