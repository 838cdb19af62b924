"""The stop rules: StopAtStepHook at its step, NanTensorHook naming the step that diverged."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common import hooks
from common.tf1 import train as tf1_train
from tests.hooks import context


def test_nan_hook_names_the_step():
    hook = hooks.NanTensorHook()
    hook.after_step(3, {"loss": np.float32(0.5)}, context())
    with pytest.raises(hooks.NanLossDuringTrainingError, match="global step 7"):
        hook.after_step(7, {"loss": np.float32(np.nan)}, context())
    ctx = context()
    hooks.NanTensorHook(fail_on_nan_loss=False).after_step(7, {"loss": np.inf}, ctx)
    assert ctx.stop_requested


def test_stop_at_step_hook():
    hook = hooks.StopAtStepHook(num_steps=10)
    ctx = context(start_step=20)
    hook.begin(ctx)
    assert hook.last_step == 30
    assert hook.steps_to_trigger(25) == 5
    hook.after_step(29, {}, ctx)
    assert not ctx.stop_requested
    hook.after_step(30, {}, ctx)
    assert ctx.stop_requested


def test_nan_hook_takes_the_loss_tensor_as_tf1_programs_gave_it_from_model_fn(tmp_path):
    with tf.Graph().as_default():
        named = tf.identity(tf.constant(1.0), name="my_loss")
    hook = hooks.NanTensorHook(named)
    assert hook.before_step(1) == ("my_loss",)
    with pytest.raises(hooks.NanLossDuringTrainingError, match="global step 4"):
        hook.after_step(4, {"my_loss": np.float32(np.nan)}, context())

    seen = []

    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features * weight - labels))
        train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, common.get_global_step())
        watcher = hooks.NanTensorHook(loss)
        seen.append(watcher.before_step(1))
        return common.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[watcher])

    data = np.ones(8, np.float32)
    poisoned = data.copy()
    poisoned[4:] = np.nan  # the second batch of 4
    estimator = common.Estimator(model_fn, str(tmp_path))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((data, data)).repeat().batch(4), steps=3)
    assert estimator.get_variable_value("global_step") == 3 and seen[0][0] != "loss"
    with pytest.raises(hooks.NanLossDuringTrainingError, match="global step 5"):
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices((poisoned, data)).batch(4), steps=3)
