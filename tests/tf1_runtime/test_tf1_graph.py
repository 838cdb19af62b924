"""Each model_fn call sees a fresh TF1 graph: scope counts, collections and a get_variable store of its own,
with TF1's rules, inside the tf.function graphs that share those with the process."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from common.tf1_runtime import tf1_graph

GraphKeys = tf.compat.v1.GraphKeys


def test_scope_numbers_and_collections_start_afresh_and_the_outer_ones_come_back():
    seen = []

    @tf.function
    def traced():
        tf.compat.v1.add_to_collection("outer", 1)
        for _ in range(2):
            with tf1_graph.fresh_graph(global_step=None):
                with tf.compat.v1.variable_scope(None, default_name="bert") as scope:
                    seen.append((scope.name, tf.compat.v1.get_collection("outer")))
                tf.compat.v1.add_to_collection(GraphKeys.UPDATE_OPS, tf.no_op())
        seen.append(tf.compat.v1.get_collection("outer"))
        return tf.constant(0)

    traced()
    assert seen == [("bert", [1]), ("bert", [1]), [1]]  # "bert" both times, never "bert_1"


def test_get_variable_follows_tf1s_rules_and_files_what_it_makes():
    with tf.Graph().as_default() as graph:
        variable_step = tf.Variable(3, name="global_step", trainable=False)
        with tf1_graph.fresh_graph(variable_step) as store:
            assert tf.compat.v1.train.get_global_step() is variable_step
            with tf.compat.v1.variable_scope("net", initializer=tf.compat.v1.constant_initializer(0.5)):
                w = tf.compat.v1.get_variable("w", [2, 3], regularizer=lambda v: tf.reduce_sum(v) * 0.0)
            with tf.compat.v1.variable_scope("net"):
                steps = tf.compat.v1.get_variable("steps", [], dtype=tf.int32)
            with tf.compat.v1.variable_scope("net"):
                with pytest.raises(ValueError, match="Variable net/w already exists, disallowed"):
                    tf.compat.v1.get_variable("w", [2, 3])
            with tf.compat.v1.variable_scope("net", reuse=True):
                assert tf.compat.v1.get_variable("w") is w
                with pytest.raises(ValueError, match="Variable net/x does not exist"):
                    tf.compat.v1.get_variable("x", [1])
            with tf.compat.v1.variable_scope("net", reuse=tf.compat.v1.AUTO_REUSE):
                assert tf.compat.v1.get_variable("w", [2, 3]) is w
                with pytest.raises(ValueError, match="specified shape \\(4,\\) and found shape \\(2, 3\\)"):
                    tf.compat.v1.get_variable("w", [4])
            assert sorted(store.variables) == ["net/steps", "net/w"] and w.name == "net/w:0"
            assert tf.compat.v1.trainable_variables() == [w, steps]
            assert len(tf.compat.v1.losses.get_regularization_losses()) == 1
        assert graph.get_collection(GraphKeys.TRAINABLE_VARIABLES) == []  # the fresh graph's are gone
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.variables_initializer([w, steps]))
            np.testing.assert_array_equal(session.run(w), np.full((2, 3), 0.5))
            assert session.run(steps) == 0  # integers start at zero, as TF1's default initializer had it


def test_the_variable_being_made_is_announced_to_variable_creators():
    announced = []

    def creator(next_creator, **kwargs):
        announced.append(tf1_graph.creating())
        return next_creator(**kwargs)

    with tf.Graph().as_default(), tf.variable_creator_scope(creator), tf1_graph.fresh_graph(None):
        tf.compat.v1.get_variable("a/b", [1])
        with tf1_graph.creating_variable("a/b/Adam", optimizer_state=True, device="/cpu:0"):
            tf.Variable(0.0, name="a/b/Adam")
        tf.Variable(1.0, name="plain")
    assert announced == [tf1_graph.Tf1Variable("a/b"), tf1_graph.Tf1Variable("a/b/Adam", True, "/cpu:0"), None]


def test_a_custom_getter_sees_tf1s_arguments_and_may_change_them():
    def doubled(getter, name, *args, **kwargs):
        kwargs["initializer"] = tf.compat.v1.constant_initializer(2.0)
        return getter(name + "_custom", *args, **kwargs)

    with tf.Graph().as_default(), tf1_graph.fresh_graph(None) as store:
        with tf.compat.v1.variable_scope("s", custom_getter=doubled):
            tf.compat.v1.get_variable("v", [1])
        assert list(store.variables) == ["s/v_custom"]


def test_the_scope_names_of_a_second_fresh_graph_start_again():
    with tf.Graph().as_default():
        with tf1_graph.fresh_graph(None):
            with tf.compat.v1.variable_scope(None, default_name="net") as first:
                pass
        with tf1_graph.fresh_graph(None):
            with tf.compat.v1.variable_scope(None, default_name="net") as second:
                pass
    assert first.name == second.name == "net"


def test_inside_a_fresh_graph_tensors_and_variables_compare_and_hash_by_identity_as_in_tf_estimators():
    w, prior = tf.Variable([1.0, 2.0]), tf.Variable([1.0, 2.0])
    seen = {}

    @tf.function
    def traced():
        x = w * 2.0
        with tf1_graph.fresh_graph(global_step=None):
            gradients = {w: x, prior: x + 1.0}  # the official CIFAR-10 example keyed gradients by variable
            seen["kept"] = [v for v in gradients if v not in [prior]]
            seen["equal"] = (w == prior, x == x)
        with pytest.raises(TypeError, match="unhashable"):
            {x: 1}  # outside model_fn, TF 2's rules again
        return x

    traced()
    assert seen["kept"] == [w] and seen["equal"] == (False, True)
    assert tf.Tensor._USE_EQUALITY


def test_inside_a_fresh_graph_keras_variables_hash_by_identity_and_are_filed_as_their_tf_variables():
    first, second = keras.Variable([1.0]), keras.Variable([1.0])
    graph = tf.Graph()
    with graph.as_default(), tf1_graph.fresh_graph(global_step=None):
        assert len({first, second, first}) == 2 and first != second and first == first  # (list(set(...)))
        tf1_graph.collect(first, graph)
        assert tf.compat.v1.global_variables() == [first.value]
    with pytest.raises(TypeError, match="unhashable"):
        {first}  # (outside, Keras 3's rules again)


def test_variables_in_model_fn_answer_tf1s_op_name(tmp_path):
    import common
    from common.tf1 import train as tf1_train
    seen = []

    def model_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("block"):
            weight = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
        seen.append([(v.op.name, v.op.type) for v in [weight] + tf.compat.v1.trainable_variables()])
        loss = tf.reduce_mean(tf.square(features * weight - labels))
        return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.1).minimize(loss))

    common.Estimator(model_fn, str(tmp_path)).train(lambda: tf.data.Dataset.from_tensors(([1.0], [2.0])), steps=1)
    assert seen and all(names == [("block/w", "VarHandleOp")] * 2 for names in seen)
    with tf.Graph().as_default():  # a graph's own variables keep their real op
        assert tf.compat.v1.get_variable("v", [1]).op.type == "VarHandleOp"
