"""tf.train.ExponentialMovingAverage in model_fn averages as tf.estimator's graph did, and a TF1 hook that
loads the averages for an evaluation (the official TPU models' LoadEMAHook) evaluates them.

The numbers are TF 2.15's tf.compat.v1.estimator running this same model_fn and hook (2026-11-26):
three steps, then two more in a second train(), gradient descent 0.1 on a linear model from zeros.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
import common.tf1.saver
import common.tf1.variables
from common.adapters import session_run_hooks as tf1_hooks
from common.tf1 import train as tf1_train
from tests import models

X = np.random.RandomState(0).rand(32, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
TF215_WEIGHTS = [0.09693694859743118, -0.1524440050125122, 0.09648505598306656]
TF215_SHADOWS = {  # num_updates: dense/w's average, dense/b's average, evaluation loss on the averages
    "none": ([0.08034588396549225, -0.12173590809106827, 0.0803566575050354], 0.052926406264305115, 0.41433108),
    "global_step": ([0.08706101775169373, -0.1332426369190216, 0.0869646891951561], 0.056584544479846954, 0.40835866),
}
TF215_LOSS = 0.3990875  # evaluated on the trained weights, before and after the averages'


def averaged_model_fn(num_updates):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("dense/w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("dense/b", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) + b - labels))
        if mode != common.ModeKeys.TRAIN:
            return common.EstimatorSpec(mode, loss=loss, predictions=w)
        step = tf1_train.get_global_step()
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        counted = step if num_updates == "global_step" else None
        ema = tf.compat.v1.train.ExponentialMovingAverage(0.5, num_updates=counted)
        with tf.control_dependencies([train_op]):
            return common.EstimatorSpec(mode, loss=loss, train_op=ema.apply())
    return model_fn


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(32)


class LoadAveragesHook(tf1_hooks.SessionRunHook):
    """The official TPU models' LoadEMAHook: the averages' names from the graph in begin(), restored after."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.restored = None

    def begin(self):
        names = tf.compat.v1.train.ExponentialMovingAverage(0.5).variables_to_restore()
        self.restored = sorted(names)
        self.saver = tf.compat.v1.train.Saver(names)

    def after_create_session(self, session, coord):
        self.saver.restore(session, tf.train.latest_checkpoint(self.model_dir))


def trained(model_dir, num_updates, towers=1):
    est = common.Estimator(averaged_model_fn(num_updates), str(model_dir),
                           config=common.RunConfig(device_plan=models.plan(towers)))
    est.train(lambda: input_fn().repeat(), steps=3)
    est.train(lambda: input_fn().repeat(), steps=2)
    return est, tf.train.load_checkpoint(est.latest_checkpoint())


@pytest.mark.parametrize("num_updates", sorted(TF215_SHADOWS))
def test_the_averages_follow_each_update_under_tf1_names_across_a_resume(tmp_path, num_updates):
    _, checkpoint = trained(tmp_path, num_updates)
    w_average, b_average, _ = TF215_SHADOWS[num_updates]
    np.testing.assert_allclose(checkpoint.get_tensor("dense/w").ravel(), TF215_WEIGHTS, rtol=1e-5)
    np.testing.assert_allclose(checkpoint.get_tensor("dense/w/ExponentialMovingAverage").ravel(), w_average, rtol=1e-5)
    np.testing.assert_allclose(checkpoint.get_tensor("dense/b/ExponentialMovingAverage"), [b_average], rtol=1e-5)


def test_two_towers_average_once_a_step(tmp_path):
    _, checkpoint = trained(tmp_path, "global_step", towers=2)
    np.testing.assert_allclose(checkpoint.get_tensor("dense/w/ExponentialMovingAverage").ravel(),
                               TF215_SHADOWS["global_step"][0], rtol=1e-5)


def test_a_hook_loads_the_averages_for_one_evaluation_only(tmp_path):
    est, _ = trained(tmp_path, "none")
    hook = LoadAveragesHook(str(tmp_path))
    assert est.evaluate(input_fn)["loss"] == pytest.approx(TF215_LOSS, rel=1e-5)
    assert est.evaluate(input_fn, hooks=[hook])["loss"] == pytest.approx(TF215_SHADOWS["none"][2], rel=1e-5)
    assert hook.restored == ["dense/b/ExponentialMovingAverage", "dense/w/ExponentialMovingAverage", "global_step"]
    assert est.evaluate(input_fn)["loss"] == pytest.approx(TF215_LOSS, rel=1e-5)  # (the trained weights again)


def test_apply_outside_model_fn_is_tensorflows_own():
    variable = tf.Variable([2.0])
    ema = tf.train.ExponentialMovingAverage(0.5)
    ema.apply([variable])
    variable.assign([4.0])
    ema.apply([variable])
    np.testing.assert_allclose(ema.average(variable).numpy(), [3.0])


def scaffold_saver_fn(names):
    """The TPU models' evaluation of the averages: Scaffold(saver=Saver(ema.variables_to_restore())), or a
    Saver of `names` (a dict name -> the variable's own name, or "a list": every variable under its own name)."""
    def model_fn(features, labels, mode):
        spec = averaged_model_fn("none")(features, labels, mode)
        if mode == common.ModeKeys.TRAIN:
            return spec
        variables = {variable.name.split(":")[0]: variable for variable in tf.compat.v1.global_variables()}
        if names is None:
            restored = tf.compat.v1.train.ExponentialMovingAverage(0.5).variables_to_restore()
        elif names == "a list":
            restored = list(variables.values())
        else:
            restored = {name: variables[own] for name, own in names.items()}
        return spec._replace(scaffold=tf1_train.Scaffold(saver=common.tf1.saver.Saver(restored)))
    return model_fn


def test_evaluation_restores_the_averages_through_the_scaffolds_saver(tmp_path):
    est = common.Estimator(scaffold_saver_fn(None), str(tmp_path))
    est.train(lambda: input_fn().repeat(), steps=3)
    est.train(lambda: input_fn().repeat(), steps=2)
    assert est.evaluate(input_fn)["loss"] == pytest.approx(TF215_SHADOWS["none"][2], rel=1e-5)  # (TF 2.15's too)
    own_names = common.Estimator(scaffold_saver_fn("a list"), str(tmp_path))  # (TF1's usual Saver: nothing renamed)
    assert own_names.evaluate(input_fn)["loss"] == pytest.approx(TF215_LOSS, rel=1e-5)
    missing = common.Estimator(scaffold_saver_fn({"dense/w/NotSaved": "dense/w"}), str(tmp_path))
    with pytest.raises(ValueError, match="the Scaffold's Saver restores dense/w/NotSaved from .*model.ckpt-5, "
                                         "which does not hold them"):
        missing.evaluate(input_fn)


def test_a_keras_layers_averages_are_named_after_its_checkpoint_names(tmp_path):
    """Keras 3 does not make its tf.Variables' names unique (two layers' "kernel"): each average is named after
    the variable's Keras path, TF1's name for it, and TF1 code may put Keras variables in a set."""
    def keras_fn(features, labels, mode):
        hidden = keras.layers.Dense(2, name="hidden")
        out = keras.layers.Dense(1, name="out")(hidden(features["x"]))
        loss = tf.reduce_mean(tf.square(out - labels))
        step = tf1_train.get_global_step()
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        ema = tf.compat.v1.train.ExponentialMovingAverage(0.9, num_updates=step)
        averaged = list(set(common.tf1.variables.trainable_variables()))  # (the TPU models' get_ema_vars)
        with tf.control_dependencies([train_op]):
            return common.EstimatorSpec(mode, loss=loss, train_op=ema.apply(averaged))

    est = common.Estimator(keras_fn, str(tmp_path))
    est.train(lambda: input_fn().repeat(), steps=2)
    names = est.get_variable_names()
    assert [n for n in names if n.endswith("ExponentialMovingAverage")] == [
        f"{layer}/{part}/ExponentialMovingAverage" for layer in ("hidden", "out") for part in ("bias", "kernel")]
