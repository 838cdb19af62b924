"""Whether a canonical TensorFlow name ("tf.gfile.GFile") exists in the TensorFlow installed here.

A TF1 original (before tf_upgrade_v2) calls `tf.get_variable`, `tf.logging.info`,
`tf.gfile.GFile`, `tf.flags`: names TensorFlow 2 keeps only under
tf.compat.v1. Asking the installed TensorFlow, not a list, is what lets the
upgrade move every such name there and refuse, by line, the ones it has
nowhere (tf.contrib's).
"""

import functools
import types


@functools.lru_cache(maxsize=None)
def exists(canonical):
    """Whether `canonical` resolves in the installed TensorFlow; resolution stops, successfully, at the first
    object that is not a module (a class's attributes, a flag's value, are the program's business)."""
    import tensorflow as tf
    parts = canonical.split(".")
    if parts[0] != "tf":
        return False
    value = tf
    for part in parts[1:]:
        if not isinstance(value, types.ModuleType):
            return True
        try:
            value = getattr(value, part)
        except (AttributeError, ImportError):
            return False
    return True


def compat_v1_name(canonical):
    """tf.compat.v1's spelling of a top-level TF1 name ("tf.get_variable" -> "tf.compat.v1.get_variable"),
    when TensorFlow lacks it at the top and tf.compat.v1 has it; else None."""
    if not canonical.startswith("tf.") or canonical.startswith("tf.compat.") or exists(canonical):
        return None
    moved = "tf.compat.v1." + canonical[len("tf."):]
    return moved if exists(moved) else None
