"""contrib's LazyAdamOptimizer: a sparse gradient moves only the rows it holds, by Adam's rule on their moments."""

import numpy as np
import tensorflow as tf

import common
from common.contrib.lazy_adam import LazyAdamOptimizer
from common.tf1 import train as tf1_train

BATCHES = np.array([[1, 3], [3, 4]], np.int64)  # (row 1 in the first batch only)


def embedding_fn(make_optimizer):
    def model_fn(features, labels, mode):
        table = tf.compat.v1.get_variable("emb", [5, 2], initializer=tf.compat.v1.ones_initializer())
        rows = tf.gather(table, features)
        loss = tf.reduce_sum(rows * rows) + 0.0 * tf.reduce_sum(labels)
        return common.EstimatorSpec(mode, loss=loss, train_op=make_optimizer().minimize(
            loss, global_step=tf1_train.get_global_step()))
    return model_fn


def trained(tmp_path, make_optimizer):
    est = common.Estimator(embedding_fn(make_optimizer), str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((BATCHES, np.zeros(2, np.float32))), steps=2)
    return est.get_variable_value("emb")


def lazy_adam_rule(lr=0.1, beta1=0.9, beta2=0.999, epsilon=1e-8):
    table, m, v = np.ones((5, 2)), np.zeros((5, 2)), np.zeros((5, 2))
    for t, rows in enumerate(BATCHES, 1):
        grad = 2 * table[rows]
        m[rows] = beta1 * m[rows] + (1 - beta1) * grad
        v[rows] = beta2 * v[rows] + (1 - beta2) * grad ** 2
        table[rows] -= lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m[rows] / (np.sqrt(v[rows]) + epsilon)
    return table


def test_only_the_rows_looked_up_move_by_adams_rule(tmp_path):
    lazy = trained(tmp_path / "lazy", lambda: LazyAdamOptimizer(0.1))
    np.testing.assert_allclose(lazy, lazy_adam_rule(), rtol=1e-5)
    np.testing.assert_array_equal(lazy[[0, 2]], np.ones((2, 2)))
    adam = trained(tmp_path / "adam", lambda: tf1_train.AdamOptimizer(0.1))
    assert not np.allclose(adam[1], lazy[1])  # (TF1's Adam moved row 1 on at step 2 from its decayed moments)
