"""Whether a canonical TensorFlow name ("tf.gfile.GFile") exists in the TensorFlow installed here.

A TF1 original (before tf_upgrade_v2) calls `tf.get_variable`, `tf.logging.info`,
`tf.gfile.GFile`, `tf.flags`: names TensorFlow 2 keeps only under
tf.compat.v1. Asking the installed TensorFlow, not a list, is what lets the
upgrade move every such name there and refuse, by line, the ones it has
nowhere (tf.contrib's).
"""

import functools
import importlib
import types

_MISSING = object()


@functools.lru_cache(maxsize=None)
def _first_non_module(canonical):
    """The object `canonical` names, followed only through modules (a class's attributes, a flag's value, are
    the program's business): the first object that is not a module, or the last module; _MISSING if none."""
    import tensorflow as tf
    parts = canonical.split(".")
    if parts[0] != "tf":
        return _MISSING
    value = tf
    for part in parts[1:]:
        if not isinstance(value, types.ModuleType):
            return value
        try:
            value = getattr(value, part)
        except (AttributeError, ImportError):
            value = _submodule(value, part)
            if value is _MISSING:
                return _MISSING
    return value


def _submodule(module, name):
    """module's submodule `name` that TensorFlow's API does not list as an attribute (tensorflow.python and
    what is under it, which TF1 programs import from), or _MISSING."""
    try:
        return importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return _MISSING


def exists(canonical):
    """Whether `canonical` resolves in the installed TensorFlow."""
    return _first_non_module(canonical) is not _MISSING


def compat_v1_name(canonical, tf1_program=False):
    """tf.compat.v1's spelling of a top-level TF1 name ("tf.get_variable" -> "tf.compat.v1.get_variable") when
    TensorFlow lacks it at the top and tf.compat.v1 has it; in a tf1_program, also of a name both have but
    whose TF1 meaning is another function or class (tf.nn.dropout's keep_prob, tf.reduce_sum's keep_dims,
    tf.data.Dataset's make_one_shot_iterator), as TF1 read it. Else None. Keras is left to its own rules."""
    if not canonical.startswith("tf.") or canonical.startswith(("tf.compat.", "tf.keras.")):
        return None
    moved = "tf.compat.v1." + canonical[len("tf."):]
    tf1_value = _first_non_module(moved)
    if tf1_value is _MISSING:
        return None
    tf2_value = _first_non_module(canonical)
    if tf2_value is _MISSING:
        return moved
    if tf1_program and not isinstance(tf2_value, types.ModuleType) and tf1_value is not tf2_value:
        return moved
    return None
