"""tf.keras.backend's TF1 learning phase, which Keras 3 does not have.

TF1 programs (the TPU models' EfficientNet and MnasNet) called
`tf.keras.backend.set_learning_phase(is_training)` in model_fn, so that Keras
layers called without `training=` ran in that mode. Keras 3 keeps no global
phase: such a layer runs as in inference (dropout off, batch norm on its moving
statistics). The call is accepted, and said once, so that a program relying on
it is told to pass `training=` instead.
"""

from tensorflow.compat.v1 import logging

_SAID = set()


def set_learning_phase(value):
    """Accepts TF1's learning phase (0/1, False/True); warns once per value that Keras 3 reads none."""
    if value not in (0, 1):
        raise ValueError(f"Expected learning phase to be 0 or 1, got {value!r}")
    if bool(value) not in _SAID:
        _SAID.add(bool(value))
        logging.warning("tf.keras.backend.set_learning_phase(%s): Keras 3 has no learning phase; a Keras layer "
                        "called without training= runs as in inference (dropout off, batch norm on its moving "
                        "statistics): pass training= to the layers that need it", value)
