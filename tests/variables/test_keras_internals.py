"""The Keras internals the framework relies on, checked against the installed Keras: a Keras that moved
them fails here, by name, not deep in a training run."""

import keras
import tensorflow as tf

from common.variables import keras_internals


def test_fresh_object_names_start_layer_names_afresh_and_restore_the_counters():
    def number(name):
        return int(name.rsplit("_", 1)[1]) if "_" in name else 0

    before = keras.layers.Dense(1).name
    with keras_internals.fresh_object_names():
        assert keras.layers.Dense(1).name == "dense" and keras.layers.Dense(1).name == "dense_1"
    assert number(keras.layers.Dense(1).name) == number(before) + 1


def test_the_name_scope_stack_shows_the_scopes_open_and_their_callers():
    assert keras_internals.name_scope_stack() == []
    with keras.name_scope("outer"):
        with keras.name_scope("inner"):
            assert [entry.name for entry in keras_internals.name_scope_stack()] == ["outer", "inner"]


def test_a_variable_made_outside_the_stateless_scope_is_made_now_and_deferred_ones_can_be_dropped():
    with keras.StatelessScope(initialize_variables=False):
        deferred = keras.Variable(initializer="zeros", shape=(2,))
        with keras_internals.outside_stateless_scope():
            made = keras.Variable(tf.ones([2]))
    assert made.numpy().tolist() == [1.0, 1.0]
    assert deferred._value is None  # deferred: waiting to be initialized
    keras_internals.forget_uninitialized([deferred])
    with keras.StatelessScope():  # leaving a scope initializes what waits: not this one any more
        pass
    assert deferred._value is None
