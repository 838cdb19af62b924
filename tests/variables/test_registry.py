"""ModelRegistry: one set of modules and variables, created only while building, with stable names."""

import keras
import pytest
import tensorflow as tf

import common
import common.tf1.layers
from common.state import checkpoints
from common.tf1 import train as tf1_train
from common.variables.registry import ModelRegistry
from tests import models


def two_layer_net():
    return keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2, name="out")])


def build(registry):
    """A model_fn's first call: a Sequential and a bare Dense, called so their variables exist."""
    with registry.model_fn_scope(building=True):
        net = common.get_module("net", two_layer_net)
        head = common.get_module("head", lambda: keras.layers.Dense(1))
        head(net(tf.zeros([1, 4])))
    return net, head


EXPECTED_NAMES = [
    "net/sequential/dense/kernel", "net/sequential/dense/bias",
    "net/sequential/out/kernel", "net/sequential/out/bias",
    "head/dense/kernel", "head/dense/bias",
]


def test_get_module_returns_the_same_object_on_every_call():
    registry = ModelRegistry("/cpu:0")
    calls = []

    def factory():
        calls.append(1)
        return keras.layers.Dense(2)

    with registry.model_fn_scope(building=True):
        first = common.get_module("net", factory)
        assert common.get_module("net", factory) is first
    for building in (False, True):
        with registry.model_fn_scope(building=building):
            assert common.get_module("net", factory) is first
    assert len(calls) == 1
    assert list(registry.modules) == ["net"]


def test_new_module_after_build_is_refused_by_name():
    registry = ModelRegistry("/cpu:0")
    build(registry)
    with registry.model_fn_scope():
        with pytest.raises(common.VariableCreationError, match="new module 'extra' after the model was built"):
            common.get_module("extra", lambda: keras.layers.Dense(1))
    assert list(registry.modules) == ["net", "head"]


def test_a_variable_the_first_call_did_not_create_is_refused_by_name():
    registry = ModelRegistry("/cpu:0")
    net, _ = build(registry)
    with registry.model_fn_scope():
        net(tf.zeros([2, 4]))  # calling the built module creates nothing: allowed
        with pytest.raises(common.VariableCreationError,
                           match="created the model variable 'stray', which its first call did not create"):
            tf.Variable(1.0, name="stray")
        with pytest.raises(common.VariableCreationError, match="'dense/kernel'.*common.get_module"):
            keras.layers.Dense(1)(tf.zeros([1, 4]))


def test_new_variable_inside_a_trace_keeps_its_error_type():
    registry = ModelRegistry("/cpu:0")
    build(registry)

    @tf.function
    def model_fn():
        with registry.model_fn_scope():
            return tf.Variable(2.0, name="traced")

    with pytest.raises(common.VariableCreationError, match="'traced'"):
        model_fn.get_concrete_function()


def test_variables_outside_any_scope_are_not_ruled():
    registry = ModelRegistry("/cpu:0")
    build(registry)
    with registry.model_fn_scope():
        pass
    assert float(tf.Variable(3.0, name="free")) == 3.0


@pytest.mark.parametrize("name", ["optimizer", "global_step", "model_fn", "", "a/b", None])
def test_reserved_or_invalid_module_names_are_refused(name):
    registry = ModelRegistry("/cpu:0")
    with registry.model_fn_scope(building=True):
        with pytest.raises(ValueError, match=r"reserved or invalid; names may not be optimizer, global_step, model_fn"):
            common.get_module(name, lambda: keras.layers.Dense(1))
    assert not registry.modules
    assert set(checkpoints.RESERVED_MODULE_NAMES) == {"optimizer", "global_step", "model_fn"}


def test_building_goes_through_the_placing_creator():
    registry = ModelRegistry("/cpu:0")
    placed = []

    def placing_creator(next_creator, **kwargs):
        placed.append(kwargs.get("name"))
        with tf.device("/cpu:2"):
            return next_creator(**kwargs)

    with registry.model_fn_scope(building=True, placing_creator=placing_creator):
        layer = common.get_module("head", lambda: keras.layers.Dense(1))
        layer(tf.zeros([1, 2]))
    assert placed == ["kernel", "bias"]
    assert [t.variable.device.rsplit("/", 1)[-1] for t in registry.tracked_variables()] == ["device:CPU:2"] * 2


def test_get_optimizer_builds_once_on_the_consolidation_device():
    registry = ModelRegistry("/cpu:3")
    build(registry)
    made = []

    def factory():
        made.append(1)
        return keras.optimizers.SGD(0.1, momentum=0.9)

    with registry.model_fn_scope():  # not building: the optimizer's own variables are exempt
        optimizer = common.get_optimizer(factory)
        assert common.get_optimizer(factory) is optimizer
    with registry.model_fn_scope(building=True):
        assert common.get_optimizer(factory) is optimizer
    assert made == [1]
    assert registry.optimizer is optimizer
    assert optimizer.iterations.value.device.endswith("device:CPU:3")
    assert registry.global_step.device.endswith("device:CPU:3")
    # The exemption ends with the factory: the model's rule holds again right after.
    with registry.model_fn_scope():
        with pytest.raises(common.VariableCreationError):
            tf.Variable(0.0, name="late")


def test_get_optimizer_made_inside_a_trace_lives_outside_it():
    registry = ModelRegistry("/cpu:0")

    @tf.function
    def model_fn():
        with registry.model_fn_scope(building=True):
            return common.get_optimizer(lambda: keras.optimizers.SGD(0.1)).iterations + 1

    assert int(model_fn()) == 1
    assert int(registry.optimizer.iterations.numpy()) == 0  # a real variable, readable eagerly


def test_tracked_variables_names_in_creation_order():
    registry = ModelRegistry("/cpu:0")
    net, head = build(registry)
    tracked = registry.tracked_variables()
    assert [t.name for t in tracked] == EXPECTED_NAMES
    assert all(t.trainable for t in tracked)
    assert all(isinstance(t.variable, tf.Variable) for t in tracked)
    kernel = tracked[4]
    assert kernel.keras_variable is head.kernel and kernel.api_variable is head.kernel
    assert kernel.variable is head.kernel.value
    assert tracked[0].variable.shape == (4, 3) and tracked[2].variable.shape == (3, 2)


def test_tracked_variables_are_stable_across_registries_in_one_process():
    """Checkpoint names must not depend on what else the process built ("dense_1", "sequential_2")."""
    keras.layers.Dense(1)
    before = keras.layers.Dense(1).name  # "dense_<k>", k >= 1: the process-wide counter is in use
    names = []
    for _ in range(2):
        registry = ModelRegistry("/cpu:0")
        build(registry)
        names.append([t.name for t in registry.tracked_variables()])
    assert names == [EXPECTED_NAMES, EXPECTED_NAMES]
    # Outside get_module the process-wide counter goes on where it was.
    after = keras.layers.Dense(1).name
    assert int(after.rsplit("_", 1)[1]) == int(before.rsplit("_", 1)[1]) + 1


def test_tracked_variables_marks_non_trainable_and_skips_shared_variables():
    registry = ModelRegistry("/cpu:0")
    with registry.model_fn_scope(building=True):
        norm = common.get_module("bn", lambda: keras.layers.BatchNormalization())
        norm(tf.zeros([2, 3]))
        common.get_module("alias", lambda: norm)  # the same layer under a second name
    tracked = registry.tracked_variables()
    assert [(t.name, t.trainable) for t in tracked] == [
        ("bn/batch_normalization/gamma", True), ("bn/batch_normalization/beta", True),
        ("bn/batch_normalization/moving_mean", False), ("bn/batch_normalization/moving_variance", False)]


def test_get_module_outside_a_model_fn_raises():
    registry = ModelRegistry("/cpu:0")
    with pytest.raises(RuntimeError, match="only work inside a model_fn"):
        common.get_module("net", two_layer_net)
    with pytest.raises(RuntimeError, match="only work inside a model_fn"):
        common.get_global_step()
    with registry.model_fn_scope(building=True):
        common.get_module("net", two_layer_net)
    with pytest.raises(RuntimeError, match="only work inside a model_fn"):
        common.get_module("net", two_layer_net)  # the scope has ended
    with pytest.raises(RuntimeError, match="only work inside a model_fn"):
        common.get_optimizer(lambda: keras.optimizers.SGD(0.1))


def test_get_global_step_is_the_registry_variable_or_the_value_given():
    registry = ModelRegistry("/cpu:0")
    assert registry.global_step.dtype == tf.int64 and not registry.global_step.trainable
    assert int(registry.global_step.numpy()) == 0
    with registry.model_fn_scope():
        assert common.get_global_step() is registry.global_step
    value = tf.constant(41, tf.int64)
    with registry.model_fn_scope(global_step=value):
        assert common.get_global_step() is value
    # The value does not outlive its scope.
    assert registry.global_step_for_model_fn() is registry.global_step
    with registry.model_fn_scope():
        assert common.get_global_step() is registry.global_step


def test_each_scope_sees_its_own_registry():
    outer, inner = ModelRegistry("/cpu:0"), ModelRegistry("/cpu:0")
    with outer.model_fn_scope(building=True):
        with inner.model_fn_scope():
            assert common.get_global_step() is inner.global_step
        assert common.get_global_step() is outer.global_step


def test_a_nested_scope_gives_the_outer_scope_back_its_rules():
    """The Estimator traces model_fn (a scope of its own) inside the scope of a loop call."""
    registry = ModelRegistry("/cpu:0")
    step = tf.constant(7, tf.int64)
    with registry.model_fn_scope(building=True, global_step=step):
        with registry.model_fn_scope():
            assert common.get_global_step() is registry.global_step
        assert common.get_global_step() is step
        common.get_module("late", lambda: keras.layers.Dense(1))(tf.zeros([1, 2]))  # still building
    assert [t.name for t in registry.tracked_variables()] == ["late/dense/kernel", "late/dense/bias"]


def test_an_update_inside_tf_cond_is_refused_not_done_unconditionally(tmp_path):
    def cond_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1])
        prior = tf.compat.v1.get_variable("prior", [1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) + prior - labels))
        optimizer = tf1_train.GradientDescentOptimizer(0.1)
        step = common.get_global_step()
        grads_and_vars = list(zip(tf.gradients(loss, [w, prior]), [w, prior]))
        train_op = tf.cond(step < 100, lambda: optimizer.apply_gradients(grads_and_vars[:1]),  # (TFP's LDA burn-in)
                           lambda: optimizer.apply_gradients(grads_and_vars))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = tf.ones((8, 3))
    est = common.Estimator(cond_fn, str(tmp_path))
    with pytest.raises(NotImplementedError, match="apply_gradients .or minimize. inside tf.cond or a loop"):
        est.train(lambda: tf.data.Dataset.from_tensors((x, tf.ones((8, 1)))).repeat(), steps=1)


@pytest.mark.parametrize("made_in_every_mode", [True, False])
def test_a_tf1_local_metric_variable_is_metric_state_zeroed_each_evaluation_and_not_saved(tmp_path,
                                                                                          made_in_every_mode):
    def model_fn(features, labels, mode):  # BERT-NER's custom streaming metric: a local variable and assign_add
        logits = common.tf1.layers.dense(features, 3, name="logits")
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, common.get_global_step())
        if mode == common.ModeKeys.TRAIN and not made_in_every_mode:
            return common.EstimatorSpec(mode, loss=loss, train_op=train_op)
        seen = tf.compat.v1.Variable(lambda: tf.zeros([], tf.float64), trainable=False, name="examples_seen",
                                     collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
                                                  tf.compat.v1.GraphKeys.METRIC_VARIABLES])
        update = tf.compat.v1.assign_add(seen, tf.cast(tf.size(labels), tf.float64))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"seen": (seen, update)})

    features, labels = models.blobs(48)
    est = common.Estimator(model_fn, str(tmp_path))
    est.train(models.train_input(features, labels, 16), steps=5)
    for _ in range(2):  # counted afresh each evaluation, the training steps' updates not among them
        assert est.evaluate(models.eval_input(features, labels, 16))["seen"] == 48
    assert not [n for n, _ in tf.train.list_variables(est.latest_checkpoint()) if "examples_seen" in n]
