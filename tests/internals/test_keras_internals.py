"""The Keras internals the framework relies on, checked against the installed Keras: a Keras that moved
them fails here, by name, not deep in a training run."""

import keras
import pytest
import tensorflow as tf

from common.internals import keras_internals


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


def test_a_deferred_variable_is_announced_by_its_own_path_while_keras_makes_it():
    seen = []

    def creator(next_creator, **kwargs):
        seen.append((kwargs.get("name"), keras_internals.initializing_path()))
        return next_creator(**kwargs)

    class Net(keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.l1 = keras.layers.Dense(2)

        def call(self, x):
            return self.l1(x)

    with keras_internals.in_model_fn(), tf.variable_creator_scope(creator), keras_internals.fresh_object_names():
        Net()(tf.zeros([1, 3]))  # a subclassed model's first call: its layers' variables are deferred
    assert ("kernel", "net/dense/kernel") in seen and ("bias", "net/dense/bias") in seen
    assert keras_internals.initializing_path() is None


def test_in_model_fn_a_keras_optimizer_can_be_made_inside_a_stateless_scope_and_outside_keras_is_its_own():
    with keras_internals.in_model_fn(), keras.StatelessScope():
        optimizer = keras.optimizers.Adam(0.1)
    assert int(optimizer.iterations.numpy()) == 0
    with pytest.raises(ValueError, match="create a variable while in a stateless scope"):
        with keras.StatelessScope():
            keras.optimizers.Adam(0.1)


def test_the_learning_rate_variable_of_an_optimizer_or_none_for_a_schedule():
    fixed = keras.optimizers.SGD(0.25)
    rate = keras_internals.learning_rate_variable(fixed)
    assert isinstance(rate, keras.Variable) and float(rate.numpy()) == 0.25
    fixed.learning_rate = 0.5
    assert float(keras_internals.learning_rate_variable(fixed).numpy()) == 0.5
    scheduled = keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5))
    assert keras_internals.learning_rate_variable(scheduled) is None


def test_a_models_symbolic_call_is_told_from_its_real_one():
    seen = []

    class Watches(keras.layers.Layer):
        def call(self, x):
            seen.append(keras_internals.in_symbolic_call())
            return x

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.watch = Watches()

        def call(self, x):
            return self.watch(x)

    Net()(tf.zeros([2, 3]))
    assert seen[-1] is False and keras_internals.in_symbolic_call() is False
    with keras.SymbolicScope():
        assert keras_internals.in_symbolic_call()
