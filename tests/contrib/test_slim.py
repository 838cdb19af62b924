"""tf.contrib.slim (the tf_slim package, an extra) inside model_fn, mended for TensorFlow 2.21, under TF1's names."""

import importlib
import sys

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import metrics as tf1_metrics
from common.tf1 import saver as tf1_saver
from common.tf1 import train as tf1_train
from tests import models


@pytest.fixture
def slim():
    pytest.importorskip("tf_slim")
    return importlib.import_module("common.contrib.slim")


def _images(size=8, count=8, seed=0):
    x = np.random.RandomState(seed).randn(count, size, size, 3).astype(np.float32)
    return x, (np.arange(count) % 3).astype(np.int64)


def _small_model_fn(slim, fused):
    def model_fn(features, labels, mode):
        training = mode == common.ModeKeys.TRAIN
        with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=tf.nn.relu,
                            weights_regularizer=slim.l2_regularizer(1e-4)):
            with slim.arg_scope([slim.batch_norm], is_training=training, fused=fused):
                net = slim.conv2d(features, 8, [3, 3], scope="conv1")
                net = slim.batch_norm(net, scope="bn1")
                net = slim.max_pool2d(net, [2, 2], scope="pool1")
                net = slim.fully_connected(slim.flatten(net), 16, scope="fc1")
                net = slim.batch_norm(net, scope="bn2")  # rank 2: slim's own fused batch norm unless fused=False
                net = slim.dropout(net, 0.5, is_training=training)
                logits = slim.fully_connected(net, 3, activation_fn=None, scope="logits")
        classes = tf.argmax(logits, 1)
        if mode == common.ModeKeys.PREDICT:
            return common.EstimatorSpec(mode, predictions={"classes": classes})
        slim.losses.sparse_softmax_cross_entropy(logits, labels)
        assert len(tf.compat.v1.losses.get_regularization_losses()) == 3  # conv1, fc1, logits weights
        total = tf.compat.v1.losses.get_total_loss()
        train_op = slim.learning.create_train_op(total, tf1_train.MomentumOptimizer(0.01, 0.9),
                                                 summarize_gradients=True)
        saver = tf1_saver.Saver(sharded=True, max_to_keep=3)
        return common.EstimatorSpec(mode, loss=total, train_op=train_op,
                                    eval_metric_ops={"acc": tf1_metrics.accuracy(labels, classes)},
                                    scaffold=tf1_train.Scaffold(saver=saver))
    return model_fn


@pytest.mark.parametrize("fused,towers", [(None, 1), (True, 1), (False, 2)])
def test_slims_layers_losses_and_create_train_op_train_evaluate_and_predict(slim, tmp_path, fused, towers):
    x, y = _images()
    est = common.Estimator(_small_model_fn(slim, fused), str(tmp_path),
                           config=common.RunConfig(device_plan=models.plan(towers)))
    est.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=2)
    names = set(est.get_variable_names())
    assert {"conv1/weights", "conv1/biases", "bn1/beta", "bn1/moving_mean", "bn1/moving_variance", "fc1/weights",
            "bn2/moving_variance", "logits/weights", "logits/biases", "conv1/weights/Momentum"} <= names
    assert "bn1/gamma" not in names  # slim's batch norm: no scale unless asked
    for name in ("bn1/moving_mean", "bn2/moving_mean"):
        assert np.abs(est.get_variable_value(name)).sum() > 0  # the statistics moved
    metrics = est.evaluate(lambda: tf.data.Dataset.from_tensors((x, y)), steps=1)
    assert metrics["global_step"] == 2 and np.isfinite(metrics["loss"])
    predictions = list(est.predict(lambda: tf.data.Dataset.from_tensors(x)))
    assert len(predictions) == 8 and all(0 <= p["classes"] < 3 for p in predictions)


@pytest.mark.parametrize("rank", [4, 2])
def test_batch_norm_moves_its_statistics_as_tf1s_slim_did(slim, tmp_path, rank):
    """decay 0.5, one step: moving = 0.5 * initial + 0.5 * the batch's (Bessel-corrected variance, the fused
    kernel's), whether slim's own fused batch norm (rank 2) or the layer it builds (rank 4) moves them."""
    x, y = _images(size=2)
    if rank == 2:
        x = x.reshape(8, -1)

    def model_fn(features, labels, mode):
        net = slim.batch_norm(features, decay=0.5, is_training=mode == common.ModeKeys.TRAIN, scope="bn")
        logits = slim.fully_connected(slim.flatten(net), 3, activation_fn=None, scope="logits")
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        return common.EstimatorSpec(mode, loss=loss, train_op=slim.learning.create_train_op(
            loss, tf1_train.GradientDescentOptimizer(0.0)))

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=1)
    axes = tuple(range(rank - 1))
    np.testing.assert_allclose(est.get_variable_value("bn/moving_mean"), 0.5 * x.mean(axes), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("bn/moving_variance"), 0.5 + 0.5 * x.var(axes, ddof=1),
                               rtol=1e-4)


def test_a_resnet_v1_of_nets_trains_under_tf1_slims_names(slim, tmp_path):
    """nets.resnet_v1 (the network resnet_v1_50 builds, with two small blocks: resnet_v1_50 itself takes a minute
    a step here) under resnet_arg_scope."""
    nets = slim.nets
    blocks = [nets.resnet_v1.resnet_v1_block("block1", base_depth=2, num_units=2, stride=2),
              nets.resnet_v1.resnet_v1_block("block2", base_depth=4, num_units=1, stride=1)]

    def model_fn(features, labels, mode):
        with slim.arg_scope(nets.resnet_v1.resnet_arg_scope()):
            logits, _ = nets.resnet_v1.resnet_v1(features, blocks, num_classes=3, scope="resnet_v1_50",
                                                 is_training=mode == common.ModeKeys.TRAIN)
        tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.squeeze(logits, [1, 2]))
        total = tf.compat.v1.losses.get_total_loss()
        with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
            train_op = tf1_train.GradientDescentOptimizer(1e-3).minimize(total)
        return common.EstimatorSpec(mode, loss=total, train_op=train_op)

    x, y = _images(size=32)
    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=1)
    names = set(est.get_variable_names())
    assert {"resnet_v1_50/conv1/weights", "resnet_v1_50/conv1/BatchNorm/beta", "resnet_v1_50/conv1/BatchNorm/gamma",
            "resnet_v1_50/conv1/BatchNorm/moving_mean", "resnet_v1_50/conv1/BatchNorm/moving_variance",
            "resnet_v1_50/block1/unit_1/bottleneck_v1/shortcut/weights",
            "resnet_v1_50/block1/unit_2/bottleneck_v1/conv3/BatchNorm/moving_variance",
            "resnet_v1_50/logits/weights", "resnet_v1_50/logits/biases"} <= names
    assert len([n for n in names if n.endswith("/weights")]) == 1 + 4 + 3 + 4 + 1  # root, units, the logits


def test_assign_from_checkpoint_fn_starts_a_new_model_from_the_checkpoint(slim, tmp_path):
    x, y = _images()
    source = common.Estimator(_small_model_fn(slim, None), str(tmp_path / "source"))
    source.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=2)

    def model_fn(features, labels, mode):
        spec = _small_model_fn(slim, None)(features, labels, mode)
        variables = slim.get_variables_to_restore(exclude=["logits"])
        init_fn = slim.assign_from_checkpoint_fn(str(tmp_path / "source"), variables, ignore_missing_vars=True)
        return spec._replace(scaffold=tf1_train.Scaffold(init_fn=lambda scaffold, session: init_fn(session)))

    warmed = common.Estimator(model_fn, str(tmp_path / "warmed"))
    warmed.train(lambda: tf.data.Dataset.from_tensors((x, y)).repeat(), steps=1)
    first = tf.train.load_checkpoint(str(tmp_path / "warmed" / "model.ckpt-0"))
    for name in ("conv1/weights", "bn1/moving_mean", "fc1/biases"):
        np.testing.assert_array_equal(first.get_tensor(name), source.get_variable_value(name))
    assert not np.array_equal(first.get_tensor("logits/weights"), source.get_variable_value("logits/weights"))
    assert warmed.get_variable_value("global_step") == 1


def test_without_tf_slim_the_import_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf_slim", None)
    monkeypatch.delitem(sys.modules, "common.contrib.slim", raising=False)
    with pytest.raises(ImportError, match="pip install tf-slim"):
        importlib.import_module("common.contrib.slim")
