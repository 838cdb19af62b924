"""TPUEstimatorSpec's host_call off a TPU (common.tpu.host_call): BERT's and EfficientNet's way of writing their
TF 2 summaries, a writer of their own and tf.summary.scalar at the step given, run on the host after each step
with its tensors' values, every TPUConfig.experimental_host_call_every_n_steps steps, into one events file."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

from common.tf1 import train as tf1_train
from common.tpu import estimator as tpu
from common.tpu import run_config
from tests import models

X = np.random.RandomState(4).randn(16, 3).astype(np.float32)
Y = X @ np.array([[1.0], [-1.0], [2.0]], np.float32)


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf1_train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)

    def host_call_fn(gs, loss):  # as BERT's and EfficientNet's: a writer made in the function, each call
        with tf.summary.create_file_writer(os.path.join(params["model_dir"], "host")).as_default():
            tf.summary.scalar("host_loss", loss[0], step=gs[0])
            return tf.compat.v1.summary.all_v2_summary_ops()

    host_call = (host_call_fn, {"gs": tf.reshape(step, [1]), "loss": tf.reshape(loss, [1])})
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)


def _written(folder):
    files = glob.glob(os.path.join(folder, "events.out.tfevents*"))
    events = [(e.step, float(tf.make_ndarray(v.tensor))) for path in files
              for e in tf.compat.v1.train.summary_iterator(path) for v in e.summary.value if v.tag == "host_loss"]
    return len(files), sorted(events)


@pytest.mark.parametrize("towers, every_n", [(1, 1), (1, 2), (2, 1)])
def test_host_call_writes_each_steps_summary_through_one_writer(tmp_path, towers, every_n):
    config = run_config.RunConfig(model_dir=str(tmp_path), device_plan=models.plan(towers),
                                  tpu_config=run_config.TPUConfig(experimental_host_call_every_n_steps=every_n))
    est = tpu.TPUEstimator(model_fn, config=config, params={"model_dir": str(tmp_path)}, use_tpu=False,
                           train_batch_size=16)
    est.train(input_fn, max_steps=4)
    files, events = _written(tmp_path / "host")
    assert files == 1  # one writer, as the function's graph made it once in TF1
    assert [step for step, _ in events] == list(range(every_n - 1, 4, every_n))  # the step each one started from
    if towers == 1:  # the loss of the step that started at each of those: gradient descent in closed form
        w, losses = np.zeros((3, 1)), []
        for _ in range(4):
            losses.append(float(np.mean(np.square(X @ w - Y))))
            w = w - 0.1 * 2 * X.T.astype(np.float64) @ (X @ w - Y) / len(X)
        np.testing.assert_allclose([loss for _, loss in events], losses[every_n - 1::every_n], rtol=1e-5)
