"""A name bound to what TensorFlow 2.21 lacks fails where it is used, naming it, not where it was imported."""

import pytest

from common.contrib.gone import Gone


def test_reaching_into_a_gone_module_is_fine_and_calling_what_it_held_says_what_is_missing():
    metrics = Gone("tensorflow.contrib.metrics")
    concat = metrics.streaming_concat  # (a branch that never runs costs nothing)
    assert repr(concat) == "<gone: tensorflow.contrib.metrics.streaming_concat>"
    with pytest.raises(NotImplementedError, match=r"tensorflow.contrib.metrics.streaming_concat: TensorFlow 2.21 has "
                                                  r"no such thing .* marked this use ERROR"):
        concat([1.0])
    with pytest.raises(AttributeError):
        metrics.__wrapped__  # (no dunder: introspection sees an ordinary object)
