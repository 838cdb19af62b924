"""tf.contrib's layer norm, initializers and lookup tables, as TF1.15 computed them."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib import layers as contrib
from common.tf1 import layers
from common.tf1 import train as tf1_train
from tests import models


def test_layer_norm_normalizes_the_last_axes_with_contribs_epsilon_and_names():
    x = np.random.RandomState(3).randn(2, 3, 4).astype(np.float32) * 5 + 2
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("bert/embeddings"):
            out = contrib.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
        names = sorted(v.name for v in tf.compat.v1.global_variables())
        inner = contrib.layer_norm(x, begin_norm_axis=1, center=False, scope="inner")
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got, got_inner = session.run([out, inner])
    assert names == ["bert/embeddings/LayerNorm/beta:0", "bert/embeddings/LayerNorm/gamma:0"]
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-12), rtol=1e-5, atol=1e-5)
    flat = x.reshape(2, -1)
    want = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(got_inner, want.reshape(x.shape), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="begin_norm_axis"):
        contrib.layer_norm(tf.zeros([2, 3]), begin_norm_axis=2)


def test_layer_norm_trains_on_two_towers_under_its_tf1_names(tmp_path):
    def model_fn(features, labels, mode):
        hidden = contrib.layer_norm(layers.dense(features, 4), scope="norm")
        loss = tf.reduce_mean(tf.square(layers.dense(hidden, 1)[:, 0] - tf.cast(labels, tf.float32)))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    features, labels = models.blobs(16)
    est = common.Estimator(model_fn, str(tmp_path), config=common.RunConfig(device_plan=models.plan(2)))
    est.train(models.train_input(features, labels, 8), steps=3)
    assert {"norm/beta", "norm/gamma"} <= set(est.get_variable_names())
    assert not np.allclose(est.get_variable_value("norm/gamma"), 1.0)  # trained


def test_lookup_tables_give_positions_hash_buckets_and_the_inverse(tmp_path):
    table = contrib.index_table_from_tensor(["a", "b", "c"])
    np.testing.assert_array_equal(table.lookup(tf.constant(["c", "a", "z"])), [2, 0, -1])
    with_oov = contrib.index_table_from_tensor(["a", "b"], num_oov_buckets=3)
    unknown = with_oov.lookup(tf.constant(["zz"])).numpy()[0]
    assert unknown == 2 + tf.strings.to_hash_bucket_fast("zz", 3).numpy()  # TF1's FastHashSpec
    inverse = contrib.index_to_string_table_from_tensor(["a", "b"], default_value="?")
    assert inverse.lookup(tf.constant([1, 5], tf.int64)).numpy().tolist() == [b"b", b"?"]
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("x\ny\n")
    from_file = contrib.index_table_from_file(str(vocabulary), default_value=-7)
    np.testing.assert_array_equal(from_file.lookup(tf.constant(["y", "q"])), [1, -7])
    with pytest.raises(ValueError, match="missing.txt does not exist"):
        contrib.index_table_from_file(str(tmp_path / "missing.txt"))


def test_initializer_and_regularizer_helpers():
    assert contrib.xavier_initializer_conv2d is contrib.xavier_initializer  # (common.contrib.initializers')
    assert float(contrib.l2_regularizer(0.5)(tf.constant([1.0, 2.0]))) == pytest.approx(0.5 * 5 / 2)
    with pytest.raises(ValueError, match="negative"):
        contrib.l2_regularizer(-1.0)


def test_embed_sequence_looks_ids_up_in_its_tf1_named_table_and_flatten_keeps_the_batch():
    ids = np.array([[0, 3, 1], [2, 2, 4]])
    with tf.Graph().as_default():
        first = contrib.embed_sequence(ids, vocab_size=5, embed_dim=2)
        second = contrib.embed_sequence(ids, vocab_size=5, embed_dim=2, unique=True)
        flat = contrib.flatten(first)
        names = [v.op.name for v in tf.compat.v1.global_variables()]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tables, got, got_unique, got_flat = session.run([tf.compat.v1.global_variables(), first, second, flat])
    assert names == ["EmbedSequence/embeddings", "EmbedSequence_1/embeddings"]  # contrib's scope, numbered by TF1
    np.testing.assert_array_equal(got, tables[0][ids])
    np.testing.assert_array_equal(got_unique, tables[1][ids])
    assert got.shape == (2, 3, 2) and got_flat.shape == (2, 6)
    np.testing.assert_array_equal(got_flat, got.reshape(2, 6))
    with pytest.raises(ValueError, match="vocab_size and embed_dim must both be given"):
        contrib.embed_sequence(ids, vocab_size=5)


def test_contribs_batch_norm_and_fully_connected_make_contribs_variables_and_normalize(tmp_path):
    x = np.random.RandomState(4).randn(8, 3).astype(np.float32) * 3 + 1

    def model_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("block"):
            normed = contrib.batch_norm(features, decay=0.9, scale=True, is_training=mode == common.ModeKeys.TRAIN)
            logits = contrib.fully_connected(normed, 1, activation_fn=None)
        if mode == common.ModeKeys.PREDICT:
            return common.EstimatorSpec(mode, predictions={"normed": normed})
        loss = tf.reduce_mean(tf.square(logits[:, 0] - labels))
        return common.EstimatorSpec(mode, loss=loss,
                                    train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((x, np.zeros(8, np.float32))).repeat(), steps=1)
    assert sorted(n for n in est.get_variable_names() if n.startswith("block/")) == [
        "block/BatchNorm/beta", "block/BatchNorm/gamma", "block/BatchNorm/moving_mean",
        "block/BatchNorm/moving_variance", "block/fully_connected/biases", "block/fully_connected/weights"]
    # one step moved the moving mean a tenth of the way (decay 0.9) to the batch mean
    np.testing.assert_allclose(est.get_variable_value("block/BatchNorm/moving_mean"), 0.1 * x.mean(0), rtol=1e-5)
    predicted = next(est.predict(lambda: tf.data.Dataset.from_tensors(x), yield_single_examples=False))["normed"]
    mean, variance = 0.1 * x.mean(0), 0.9 + 0.1 * x.var(0)  # inference: the moving statistics (2-D: not fused)
    np.testing.assert_allclose(predicted, (x - mean) / np.sqrt(variance + 0.001), rtol=1e-4, atol=1e-5)


def test_greedy_load_balancing_places_each_variable_on_the_least_loaded_task():
    with tf.Graph().as_default():
        ops = [tf.compat.v1.get_variable(name, shape).op for name, shape in
               (("big", [100, 10]), ("small", [10]), ("mid", [50]), ("tiny", [2]))]
        strategy = contrib.GreedyLoadBalancingStrategy(2, contrib.byte_size_load_fn)
        assert [strategy(op) for op in ops] == [0, 1, 1, 1]  # 4000 bytes on task 0; 40, 200, 8 on task 1
        assert contrib.byte_size_load_fn(ops[0]) == 4000
    with pytest.raises(ValueError, match="num_tasks must be >= 1"):
        contrib.GreedyLoadBalancingStrategy(0, contrib.byte_size_load_fn)


@pytest.mark.parametrize("optimizer", ["SGD", tf1_train.GradientDescentOptimizer,
                                       lambda rate: tf1_train.GradientDescentOptimizer(rate)])
def test_optimize_loss_steps_with_its_rate_variable_clips_to_the_global_norm_and_summarizes(tmp_path, optimizer):
    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [2], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_sum(tf.square(weight - tf.constant([3.0, 4.0])))  # gradient at 0: (-6, -8), norm 10
        train_op = contrib.optimize_loss(loss, common.get_global_step(), 0.5, optimizer, clip_gradients=1.0)
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = common.Estimator(model_fn, str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors((0.0, 0.0)).repeat(), steps=1)
    np.testing.assert_allclose(est.get_variable_value("w"), [0.3, 0.4], rtol=1e-6)  # 0.5 * (6, 8) / 10
    assert est.get_variable_value("OptimizeLoss/learning_rate") == 0.5
    events = [path for path in os.listdir(tmp_path) if path.startswith("events.out.tfevents")]
    tags = {v.tag for path in events for e in tf.compat.v1.train.summary_iterator(os.path.join(tmp_path, path))
            for v in e.summary.value}
    assert {"OptimizeLoss/loss", "OptimizeLoss/learning_rate", "OptimizeLoss/global_norm/gradient_norm"} <= tags
    with pytest.raises(ValueError, match="optimizer 'Nope' is not one of Adagrad, Adam, Ftrl, Momentum"):
        contrib.optimize_loss(tf.constant(1.0), None, 0.1, "Nope")


def test_contribs_conv2d_pools_and_dropout_compute_as_tf1_named_them():
    x = np.random.RandomState(5).randn(2, 6, 6, 3).astype(np.float32)
    with tf.Graph().as_default():
        conv = contrib.conv2d(x, 4, 3, weights_initializer=tf.compat.v1.ones_initializer())
        pooled, averaged = contrib.max_pool2d(conv, 2), contrib.avg_pool2d(conv, [2, 2], stride=2)
        kept = contrib.dropout(x, keep_prob=0.5, is_training=False)
        names = [v.op.name for v in tf.compat.v1.global_variables()]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got_conv, got_max, got_avg, got_kept = session.run([conv, pooled, averaged, kept])
    assert names == ["Conv/weights", "Conv/biases"]
    summed = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))  # SAME padding, a 3x3 kernel of ones: window sums
    want = np.stack([summed[:, i:i + 3, j:j + 3, :].sum((1, 2, 3)) for i in range(6) for j in range(6)], 1)
    np.testing.assert_allclose(got_conv[..., 0].reshape(2, 36), np.maximum(want, 0), rtol=1e-5, atol=1e-5)
    assert got_max.shape == got_avg.shape == (2, 3, 3, 4)
    np.testing.assert_allclose(got_max[:, 0, 0], got_conv[:, :2, :2].max((1, 2)), rtol=1e-6)
    np.testing.assert_array_equal(got_kept, x)  # no dropout outside training


@pytest.mark.parametrize("padding, side", [("SAME", 10), ("VALID", 11)])
def test_contribs_conv2d_transpose_upsamples_as_keras_and_numpy_and_names_its_variables(padding, side):
    x = np.random.RandomState(6).randn(2, 5, 5, 3).astype(np.float32)
    kernel = np.random.RandomState(7).randn(3, 3, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        up = contrib.conv2d_transpose(x, 4, 3, stride=2, padding=padding, activation_fn=None,
                                      weights_initializer=tf.compat.v1.constant_initializer(kernel))
        names = [v.op.name for v in tf.compat.v1.global_variables()]
        static = up.shape.as_list()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got = session.run(up)
    assert names == ["Conv2d_transpose/weights", "Conv2d_transpose/biases"]
    assert static == [2, side, side, 4] and got.shape == (2, side, side, 4)
    keras_layer = keras.layers.Conv2DTranspose(4, 3, strides=2, padding=padding.lower(), use_bias=False)
    keras_layer.build((None, 5, 5, 3))
    keras_layer.set_weights([kernel])
    np.testing.assert_allclose(got, keras_layer(x), rtol=1e-5, atol=1e-5)
    if padding == "VALID":  # each input pixel adds its kernel-weighted patch at twice its position
        want = np.zeros((2, 11, 11, 4), np.float32)
        for i in range(5):
            for j in range(5):
                want[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum("nc,aboc->nabo", x[:, i, j], kernel)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_contribs_stack_applies_a_layer_once_per_argument_in_numbered_scopes():
    with tf.Graph().as_default():
        out = contrib.stack(tf.zeros([2, 3]), contrib.fully_connected, [5, 4, 2])
        names = [v.op.name for v in tf.compat.v1.trainable_variables()]
    assert out.shape == (2, 2)
    assert names[:2] == ["Stack/fully_connected_1/weights", "Stack/fully_connected_1/biases"]
    assert names[-2:] == ["Stack/fully_connected_3/weights", "Stack/fully_connected_3/biases"]


def test_contribs_linear_relu_and_relu6_are_fully_connected_with_that_activation():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
        init = {"weights_initializer": tf.compat.v1.constant_initializer([[2.0, -1.0], [1.0, 3.0]])}
        outputs = [layer(x, 2, scope=name, **init) for name, layer in
                   (("lin", contrib.linear), ("r", contrib.relu), ("r6", contrib.relu6))]
        names = [v.op.name for v in tf.compat.v1.trainable_variables()]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            linear, relu, relu6 = session.run(outputs)
    np.testing.assert_allclose(linear, [[0.0, -7.0], [10.0, 9.0]])
    np.testing.assert_allclose(relu, np.maximum(linear, 0))
    np.testing.assert_allclose(relu6, np.clip(linear, 0, 6))
    assert names[:2] == ["lin/weights", "lin/biases"]
