"""A user's model_fn adapted for the engine: its signature's choice of arguments, and what it hands over
besides the spec made the spec's parts."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.adapters import model_fns
from common.tf1 import summary
from common.tf1 import train as tf1_train


def test_a_model_fn_without_features_is_refused_by_name():
    with pytest.raises(ValueError, match="model_fn must take an argument named 'features'"):
        model_fns.adapt(lambda inputs, labels, mode: None)


def test_the_adapted_model_fn_passes_only_the_arguments_the_users_names():
    seen = {}

    def model_fn(features, mode):
        seen.update(features=features, mode=mode)
        return "not a spec"

    adapted = model_fns.adapt(model_fn)
    assert adapted(1, labels=2, mode="eval", params={}, config=None) == "not a spec"  # (the engine refuses it)
    assert seen == {"features": 1, "mode": "eval"}
    assert adapted.__name__ == "model_fn"


def test_a_train_calls_summary_scalars_join_the_specs_scalars_the_specs_own_winning(tmp_path):
    logged = {}

    def model_fn(features, labels, mode):
        scale = tf.compat.v1.get_variable("scale", [], initializer=tf.compat.v1.ones_initializer())
        loss = tf.reduce_mean(tf.square(features * scale - labels))
        summary.scalar("doubled", 2.0 * loss)
        summary.scalar("clash", tf.constant(1.0))
        return common.EstimatorSpec(mode, loss=loss, scalars={"clash": tf.constant(5.0)},
                                    train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(loss))

    class Recorder(common.hooks.Hook):
        def before_step(self, step):
            return ("loss", "doubled", "clash")

        def after_step(self, step, values, context):
            logged.update(values)

    features = np.array([[1.0], [2.0]], np.float32)
    common.Estimator(model_fn, str(tmp_path)).train(
        lambda: tf.data.Dataset.from_tensors((features, 3 * features)).repeat(), steps=1, hooks=[Recorder()])
    assert logged["doubled"] == pytest.approx(2 * logged["loss"])
    assert logged["clash"] == 5.0
