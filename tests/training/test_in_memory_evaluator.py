"""InMemoryEvaluatorHook evaluates the model training holds, at TF1's moments: before the first step, every
N steps after the last evaluation, at the end (TF 2.15 ran this program's hook at global steps 0, 3, 6, 7,
its step-3 results equal to evaluate() of model.ckpt-3)."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.tf1 import layers as tf1_layers
from common.tf1 import metrics as tf1_metrics
from common.tf1 import train as tf1_train
from common.training.in_memory_evaluator import InMemoryEvaluatorHook

X = np.random.RandomState(0).randn(32, 3).astype(np.float32)
Y = (X.sum(1) > 0).astype(np.int32)


def _model_fn(features, labels, mode):
    logits = tf1_layers.dense(features, 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf1_train.GradientDescentOptimizer(0.5).minimize(loss, tf.compat.v1.train.get_global_step())
    return common.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                eval_metric_ops={"acc": tf1_metrics.accuracy(labels, tf.argmax(logits, 1))})


def _eval_input():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(8)


def test_it_evaluates_before_training_every_n_steps_and_at_the_end_on_the_weights_in_memory(tmp_path):
    est = common.Estimator(_model_fn, str(tmp_path), config=common.RunConfig(save_checkpoints_steps=3))
    hook = InMemoryEvaluatorHook(est, _eval_input, name="mem", every_n_iter=3)
    est.train(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4), hooks=[hook], steps=7)
    assert [step for step, _ in hook.results] == [0, 3, 6, 7]
    assert [results["global_step"] for _, results in hook.results] == [0, 3, 6, 7]
    from_checkpoint = est.evaluate(_eval_input, checkpoint_path=str(tmp_path / "model.ckpt-3"))
    assert hook.results[1][1] == pytest.approx(from_checkpoint)  # (what training held at step 3: no checkpoint read)
    assert hook.results[-1][1] == pytest.approx(est.evaluate(_eval_input))
    assert hook.results[0][1]["loss"] > hook.results[-1][1]["loss"]
    assert tf.io.gfile.glob(str(tmp_path / "eval_mem" / "events.out.tfevents.*"))
    assert est.get_variable_value("global_step") == 7  # (training went on from where it was)


def test_it_refuses_what_tf1s_refused_and_an_estimator_that_is_not_the_one_training(tmp_path):
    est = common.Estimator(_model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        InMemoryEvaluatorHook(est, _eval_input, every_n_iter=0)
    hook = InMemoryEvaluatorHook(est, _eval_input, every_n_iter=3)  # (then add_metrics' new object trains)
    with pytest.raises(ValueError, match="give the hook the Estimator object that trains"):
        common.add_metrics(est, lambda predictions: {}).train(
            lambda: tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4), hooks=[hook], steps=2)
    assert not tf.io.gfile.glob(str(tmp_path / "model.ckpt-*"))  # (refused before it wrote a checkpoint)
