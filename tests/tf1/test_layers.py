"""TF1 layers inside model_fn: TF1 defaults, shared over towers and modes; sharing within a call
refused; fed by feature columns."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
import common.hooks
from common.tf1 import layers
from common.tf1 import train as tf1_train
from tests import models

RNG = np.random.RandomState(7)


def test_tf1_batch_normalization_keeps_tf1_defaults(tmp_path):
    def bn_fn(features, labels, mode):
        normalized = layers.batch_normalization(features, training=mode == common.ModeKeys.TRAIN)
        loss = tf.reduce_mean(tf.square(layers.dense(normalized, 1, kernel_initializer="zeros") - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    x = RNG.randn(32, 3).astype(np.float32) * 2 + 5
    est = common.Estimator(bn_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, np.zeros((32, 1), np.float32))).repeat(), steps=1)
    moving_mean = est.get_variable_value("batch_normalization/moving_mean")
    np.testing.assert_allclose(moving_mean, 0.01 * x.mean(axis=0), rtol=1e-5)  # TF1's momentum: 0.99


class _NormalizingNet(keras.Model):
    """A Keras model whose call uses TF1's batch norm, as the TPU models' EfficientNet and MnasNet did."""

    def __init__(self):
        super().__init__()
        self.norm, self.out = layers.BatchNormalization(), layers.Dense(1, kernel_initializer="zeros")

    def call(self, x, training=False):
        return self.out(self.norm(x, training=training))


@pytest.mark.parametrize("shape", [(32, 3), (8, 2, 2, 3)])  # (plain, and an image's fused kernel)
def test_tf1_batch_norm_inside_a_keras_models_call_updates_once_per_step(tmp_path, shape):
    """Keras 3 first traces a model's call for its output shapes in a graph it drops: no update comes from it."""
    def net_fn(features, labels, mode):
        out = tf.reshape(_NormalizingNet()(features, training=mode == common.ModeKeys.TRAIN), [-1])
        loss = tf.reduce_mean(tf.square(out - 1.0))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    x = RNG.randn(*shape).astype(np.float32) * 2 + 5
    est = common.Estimator(net_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, np.zeros((1,), np.float32))).repeat(), steps=2)
    moving_mean = est.get_variable_value("batch_normalization/moving_mean")
    np.testing.assert_allclose(moving_mean, (1 - 0.99 ** 2) * x.reshape(-1, 3).mean(axis=0), rtol=1e-5)


def test_a_tf1_layer_object_lists_its_variables_as_tf1s_keras_based_layers_did():
    with tf.Graph().as_default():
        dense, norm = layers.Dense(3, name="d"), layers.BatchNormalization(name="bn")
        norm(dense(tf.zeros([2, 4])), training=True)
        assert [v.name for v in dense.weights] == ["d/kernel:0", "d/bias:0"]
        assert dense.variables == dense.trainable_weights == dense.trainable_variables == dense.weights
        assert [v.name for v in norm.weights] == ["bn/gamma:0", "bn/beta:0", "bn/moving_mean:0",
                                                  "bn/moving_variance:0"]
        assert [v.name for v in norm.non_trainable_weights] == ["bn/moving_mean:0", "bn/moving_variance:0"]
        frozen = layers.Dense(1, trainable=False, name="f")
        frozen(tf.zeros([2, 4]))
        assert frozen.trainable_weights == [] and len(frozen.non_trainable_variables) == 2


def test_tf1_names_and_sharing_as_a_tf1_graph_had_them(tmp_path):
    names = []

    def shared_fn(features, labels, mode):
        first = layers.dense(features, 2, name="tower")
        again = layers.dense(features, 2, name="tower", reuse=True)  # the same variables
        with tf.compat.v1.variable_scope("block"):
            unnamed = layers.dense(layers.dense(first, 2), 2)  # dense, dense_1
        with tf.compat.v1.variable_scope("block", reuse=True):
            layers.dense(first, 2)  # block/dense again
        names.append(sorted(v.name for v in tf.compat.v1.trainable_variables()))
        loss = tf.reduce_mean(tf.square(unnamed + again - first - again))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(16)
    est = common.Estimator(shared_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(models.train_input(features, labels, 8), steps=2)
    expected = ["block/dense/bias:0", "block/dense/kernel:0", "block/dense_1/bias:0", "block/dense_1/kernel:0",
                "tower/bias:0", "tower/kernel:0"]
    assert names[0] == expected and names[-1] == expected  # the probe, and the last tower of a step: the same
    assert sorted(n for n in est.get_variable_names() if n in [e[:-2] for e in expected]) == \
        sorted(e[:-2] for e in expected)
    with pytest.raises(ValueError, match="Variable tower/kernel already exists, disallowed"):
        with tf.Graph().as_default():
            layers.dense(tf.zeros([1, 2]), 3, name="tower")
            layers.dense(tf.zeros([1, 2]), 3, name="tower")


def test_layer_objects_are_named_as_tf1s_keras_based_layers_named_themselves():
    """A class's name numbered as it recurs ("tpu_batch_normalization", then "_1": EfficientNet's two batch
    norms of a block, named alike), a program's subclass after its own name; the function form's exactly."""
    class TpuBatchNormalization(layers.BatchNormalization):
        pass

    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        TpuBatchNormalization()(x, training=True)
        layers.BatchNormalization(name="tpu_batch_normalization")(x, training=True)
        layers.Dense(2, name="fc")(x)
        layers.Dense(2, name="fc")(x)
        layers.dense(x, 2, name="head")
        names = sorted({v.name.split("/")[0] for v in tf.compat.v1.global_variables()})
    assert names == ["fc", "fc_1", "head", "tpu_batch_normalization", "tpu_batch_normalization_1"]


def test_numeric_feature_columns_feed_a_model_on_two_towers(tmp_path):
    columns = [tf.feature_column.numeric_column("a", shape=(2,)), tf.feature_column.numeric_column("b", shape=(2,))]

    def columns_fn(features, labels, mode):
        net = tf.compat.v1.feature_column.input_layer(features, columns)
        logits = layers.dense(layers.dense(net, 8, activation=tf.nn.relu), 3)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.AdamOptimizer(0.05).minimize(loss))

    features, labels = models.blobs(128)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"a": features[:, :2], "b": features[:, 2:]}, labels)).batch(32)

    est = common.Estimator(columns_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2, "GPU")))
    before = est.evaluate(input_fn)["loss"]
    est.train(lambda: input_fn().repeat(), steps=30)
    assert est.evaluate(input_fn)["loss"] < before / 3


def test_a_layer_object_takes_its_named_scope_where_it_was_made_and_apply_calls_it(tmp_path):
    """TF1's Layer(_scope=name) captured the variable scope at construction (an SSD's convolutions made in
    variable_scope("conv1") and called later, elsewhere, through Layer.apply); a bare tf.compat.v1.Variable
    made in a variable scope takes the scope's name, as in TF 2.15's graph."""
    def model_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("ssd300"):
            with tf.compat.v1.variable_scope("conv1"):
                convs = [layers.Conv2D(2, 3, padding="same", _scope="conv1_1"), layers.Conv2D(2, 3, _scope="conv1_2")]
            with tf.compat.v1.variable_scope("conv4_3_scale"):
                scale = tf.compat.v1.Variable(tf.ones([2]), name="weights")
        net = features
        for conv in convs:
            net = conv.apply(net)
        loss = tf.reduce_mean(tf.square(net * scale - 1.0))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()))

    x = RNG.randn(4, 5, 5, 1).astype(np.float32)
    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, x)).repeat(), steps=1)
    assert sorted(est.get_variable_names()) == [
        "global_step", "model_fn/ssd300/conv4_3_scale/weights", "ssd300/conv1/conv1_1/bias",
        "ssd300/conv1/conv1_1/kernel", "ssd300/conv1/conv1_2/bias", "ssd300/conv1/conv1_2/kernel"]
    values = {name[len("model_fn/"):] if name.startswith("model_fn/") else name: est.get_variable_value(name)
              for name in est.get_variable_names()}  # (the names TF 2.15's graph gave them)
    tf215_dir = tmp_path / "tf215"
    tf.compat.v1.train.Saver(var_list={name: tf.Variable(value) for name, value in values.items()}).save(
        None, str(tf215_dir / "model.ckpt-1"), write_meta_graph=False)
    carried = common.Estimator(model_fn, str(tf215_dir))
    carried.train(lambda: tf.data.Dataset.from_tensors((x, x)).repeat(), steps=1)
    assert carried.get_variable_value("global_step") == 2


def test_a_named_layers_ops_are_in_its_name_scope_as_tf1s_were():
    """The tensors a TF1 program (or the .meta's reader) fetches by name: fc/BiasAdd, block/inner/BiasAdd."""
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3])
        first = layers.dense(x, 2, name="fc")
        again = layers.dense(x, 2, name="fc", reuse=True)
        with tf.compat.v1.variable_scope("block"):
            inner = layers.Dense(2, _scope="inner")
        applied = inner.apply(again)
        assert [first.name, again.name, applied.name] == ["fc/BiasAdd:0", "fc_1/BiasAdd:0", "block/inner/BiasAdd:0"]
