"""tf.keras.backend.set_learning_phase is accepted, and said once, since Keras 3 reads no learning phase."""

import pytest

from common.tf1 import keras_backend


def test_the_learning_phase_is_said_once_per_value_and_refused_outside_0_and_1(caplog):
    caplog.set_level("WARNING", logger="tensorflow")
    for value in (True, 1, False, True):
        keras_backend.set_learning_phase(value)
    said = [r.getMessage() for r in caplog.records if "set_learning_phase" in r.getMessage()]
    assert len(said) <= 2 and all("pass training= to the layers that need it" in s for s in said)
    with pytest.raises(ValueError, match="Expected learning phase to be 0 or 1, got 2"):
        keras_backend.set_learning_phase(2)
