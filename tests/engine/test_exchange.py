"""The packed exchange of compiled towers on real logical CPU devices: its buffers, the per-device update
(an optimizer reading its step count on a device that does not hold it), the NaN stop, and the optimizers
that take the variable-by-variable path."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.engine import exchange
from tests import models

FEATURES, LABELS = models.blobs(256)


def test_packing_makes_one_buffer_per_dtype_and_gives_back_each_tensor():
    tensors = [tf.random.normal([3, 4]), tf.constant(7, tf.int64), tf.zeros([0, 2]), tf.random.normal([5]),
               tf.constant([1, 2], tf.int64)]
    packing = exchange.Packing.of(tensors)
    buffers = packing.pack(tensors)
    assert [(b.dtype, b.shape.as_list()) for b in buffers] == [(tf.float32, [17]), (tf.int64, [3])]
    for unpacked, tensor in zip(packing.unpack(buffers), tensors):
        assert unpacked.dtype == tensor.dtype and unpacked.shape == tensor.shape
        np.testing.assert_array_equal(unpacked.numpy(), tensor.numpy())


def _adam_fn(features, labels, mode, params):
    net = common.get_module("net", lambda: keras.Sequential([
        keras.layers.Dense(8, activation="relu", name="hidden"), keras.layers.BatchNormalization(name="bn"),
        keras.layers.Dense(3, name="logits")], name="classifier"))
    logits = net(features, training=mode == common.ModeKeys.TRAIN)
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    optimizer = common.get_optimizer(lambda: keras.optimizers.Adam(0.01, **params))
    return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer, predictions={"logits": logits})


def _trained(model_dir, jit, strategy, params=None):
    config = common.RunConfig(tf_random_seed=5, jit_compile=jit, device_plan=models.plan(2, strategy))
    est = common.Estimator(_adam_fn, str(model_dir), params=params or {}, config=config)
    est.train(models.one_batch(FEATURES, LABELS), steps=5)
    return {name: est.get_variable_value(name) for name in est.get_variable_names()}


def _spy_on_updates(monkeypatch):
    """The variable devices of each packed update traced."""
    traced, apply = [], exchange.PackedExchange.apply
    monkeypatch.setattr(exchange.PackedExchange, "apply", lambda self, passes: traced.append(
        [d.split("device:")[-1] for d in self.devices]) or apply(self, passes))
    return traced


@pytest.mark.parametrize("strategy,devices,adam", [("CPU", ["CPU:0"], {}), ("GPU", ["CPU:0", "CPU:1"], {}),
                                                  ("GPU", ["CPU:0", "CPU:1"], {"weight_decay": 0.1, "clipnorm": 0.1})])
def test_compiled_towers_update_each_variable_device_as_the_plain_towers_do(tmp_path, monkeypatch, strategy, devices,
                                                                            adam):
    traced = _spy_on_updates(monkeypatch)
    packed = _trained(tmp_path / "packed", True, strategy, adam)
    assert traced == [devices]  # with GPU, Adam's step count is on CPU:0 and read by CPU:1's update
    plain = _trained(tmp_path / "plain", False, strategy, adam)
    assert packed.keys() == plain.keys() and "optimizer/classifier_hidden_kernel_velocity" in packed
    assert packed["optimizer/iteration"] == plain["optimizer/iteration"] == 5
    for name, value in packed.items():
        np.testing.assert_allclose(value, plain[name], rtol=1e-4, atol=1e-6, err_msg=name)


def test_an_optimizer_that_needs_every_gradient_takes_the_variable_by_variable_path(tmp_path, monkeypatch):
    traced = _spy_on_updates(monkeypatch)
    clipped = {"global_clipnorm": 0.05}
    packed = _trained(tmp_path / "compiled", True, "GPU", clipped)
    plain = _trained(tmp_path / "plain", False, "GPU", clipped)
    assert traced == []
    for name, value in packed.items():
        np.testing.assert_allclose(value, plain[name], rtol=1e-4, atol=1e-6, err_msg=name)


def test_which_optimizers_apply_per_device():
    dense = keras.layers.Dense(2)
    dense.build((None, 3))

    class Tracked:
        api_variable = dense.kernel

    for optimizer, per_device in ((keras.optimizers.SGD(0.1, momentum=0.9), True), (keras.optimizers.Adam(), True),
                                  (keras.optimizers.SGD(0.1, global_clipnorm=1.0), False),
                                  (keras.optimizers.Adam(use_ema=True), False),
                                  (keras.optimizers.Adam(gradient_accumulation_steps=2), False),
                                  (keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1)), False)):
        assert exchange.applies_per_device(optimizer, [Tracked]) is per_device, optimizer
    dense.kernel.overwrite_with_gradient = True
    assert not exchange.applies_per_device(keras.optimizers.SGD(0.1), [Tracked])


def test_a_nan_gradient_in_one_compiled_tower_stops_the_run_at_that_step(tmp_path, monkeypatch):
    traced = _spy_on_updates(monkeypatch)

    def model_fn(features, labels, mode):
        scale = common.get_module("scale", lambda: keras.layers.Dense(1, use_bias=False, kernel_initializer="ones"))
        y = scale(features)
        loss = tf.reduce_mean(tf.where(y > 0, tf.pow(y, 0.5), tf.zeros_like(y)))  # NaN gradient where y < 0
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.1)))

    features = np.array([[1.0], [4.0], [-1.0], [9.0]], np.float32)  # the second tower's shard holds -1
    config = common.RunConfig(save_checkpoints_steps=1, jit_compile=True, device_plan=models.plan(2, "GPU"))
    estimator = common.Estimator(model_fn, str(tmp_path), config=config)
    with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError, match="loss = nan at global step 1"):
        estimator.train(lambda: tf.data.Dataset.from_tensors((features, features)).repeat(), steps=3)
    assert traced and estimator.latest_checkpoint().endswith("model.ckpt-0")


def _plain_variable_fn(features, labels, mode):
    scale = common.get_module("scale", lambda: tf.Module(name="scale"))
    if not hasattr(scale, "weight"):
        scale.weight = tf.Variable(tf.ones([2, 3]), name="weight")
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, features @ scale.weight,
                                                                       from_logits=True))
    return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.1)))


def _own_update_fn(features, labels, mode):
    """TF 2.x estimator code: a Keras optimizer model_fn makes and applies itself."""
    net, optimizer = keras.layers.Dense(3, name="logits"), keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, net(features), from_logits=True))
    train_op = optimizer.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("model_fn,compiles,reason", [
    (_adam_fn, True, None), (_plain_variable_fn, False, "scale/weight is a plain tf.Variable"),
    (_own_update_fn, False, "model_fn's train_op updates variables itself")])
def test_by_default_gpu_towers_compile_unless_the_model_cannot(tmp_path, monkeypatch, caplog, model_fn, compiles,
                                                                reason):
    """The default over several GPU towers, on two logical CPUs taken for GPUs: compiled towers where the model
    allows, plain ones (said in the log) where it does not; each trains as the plain towers do."""
    from common.devices.plan import DevicePlan
    monkeypatch.setattr(DevicePlan, "uses_gpus", property(lambda plan: True))
    traced = _spy_on_updates(monkeypatch)
    caplog.set_level("INFO", logger="tensorflow")  # (another test may have left TensorFlow's logger at WARNING)
    x = FEATURES[:32, :2]
    runs = {}
    for jit in (None, False):
        config = common.RunConfig(tf_random_seed=5, jit_compile=jit, device_plan=models.plan(2, "GPU"))
        est = common.Estimator(model_fn, str(tmp_path / str(jit)), params={}, config=config)
        est.train(lambda: tf.data.Dataset.from_tensors((x, LABELS[:32])).repeat(), steps=3)
        runs[jit] = {name: est.get_variable_value(name) for name in est.get_variable_names()}
    assert bool(traced) is compiles
    said = [r.getMessage() for r in caplog.records if "Towers run without XLA" in r.getMessage()]
    assert said == ([] if compiles else [f"Towers run without XLA (by default each GPU tower compiles): {reason}"])
    for name, value in runs[None].items():
        np.testing.assert_allclose(value, runs[False][name], rtol=1e-4, atol=1e-6, err_msg=name)


def test_an_embeddings_sparse_gradient_is_applied_sparsely_as_by_the_plain_towers(tmp_path, monkeypatch):
    """Adam moves only the rows a batch looks up when the gradient is an IndexedSlices; densified, it would decay
    every row's moments (the plain towers keep it sparse; so must the packed exchange)."""
    traced = _spy_on_updates(monkeypatch)

    def model_fn(features, labels, mode):
        net = common.get_module("net", lambda: keras.Sequential(
            [keras.layers.Embedding(50, 4, name="emb"), keras.layers.Flatten(), keras.layers.Dense(3, name="logits")],
            name="classifier"))
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, net(features), from_logits=True))
        optimizer = common.get_optimizer(lambda: keras.optimizers.Adam(0.01))
        return common.EstimatorSpec(mode, loss=loss, optimizer=optimizer)

    ids = np.random.RandomState(0).randint(0, 50, size=(32, 5)).astype(np.int32)
    runs = {}
    for jit in (True, False):
        config = common.RunConfig(tf_random_seed=5, jit_compile=jit, device_plan=models.plan(2, "GPU"))
        est = common.Estimator(model_fn, str(tmp_path / str(jit)), config=config)
        est.train(lambda: tf.data.Dataset.from_tensors((ids, LABELS[:32])).repeat(), steps=4)
        runs[jit] = {name: est.get_variable_value(name) for name in est.get_variable_names()}
    assert traced
    for name, value in runs[True].items():
        np.testing.assert_allclose(value, runs[False][name], rtol=1e-4, atol=1e-6, err_msg=name)
