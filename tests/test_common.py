"""`import common`: the public names, and an import that leaves TensorFlow as it was."""

import inspect
import os
import subprocess
import sys

import pytest

import common
from tests import ROOT


def test_import_common_loads_no_tensorflow_and_sets_nothing():
    code = ("import logging, os, sys\n"
            "before = dict(os.environ)\n"
            "import common\n"
            "print('tensorflow' in sys.modules, 'keras' in sys.modules, dict(os.environ) == before)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "True"]


@pytest.mark.parametrize("name", common.__all__)
def test_every_public_name_resolves(name):
    value = getattr(common, name)
    assert value is not None
    assert name in dir(common)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Estimater'"):
        common.Estimater  # noqa: B018


def test_the_public_modules_are_modules():
    assert inspect.ismodule(common.hooks) and inspect.ismodule(common.metrics)
    assert common.early_stopping.__name__ == "common.training.early_stopping"


def test_after_training_tf1_code_plain_tensorflow_is_as_tensorflow_left_it():
    """The framework replaces what TF1 code in model_fn needs only while model_fn runs: after a train() of a
    TF1-style model_fn (get_variable, a TF1 optimizer, var.op.name read inside), an eager Variable.op raises as
    in TensorFlow, tensors are compared element-wise, and TensorFlow's logger still propagates."""
    code = ("import common, common.tf1.train\n"
            "import tensorflow as tf\n"
            "def model_fn(features, labels, mode):\n"
            "    w = tf.compat.v1.get_variable('w', [2, 1])\n"
            "    assert w.op.name == 'w'\n"
            "    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))\n"
            "    return common.EstimatorSpec(mode, loss=loss,\n"
            "        train_op=common.tf1.train.GradientDescentOptimizer(0.1).minimize(loss))\n"
            "common.Estimator(model_fn).train(\n"
            "    lambda: tf.data.Dataset.from_tensors((tf.ones([4, 2]), tf.ones([4, 1]))).repeat(), max_steps=2)\n"
            "try:\n"
            "    tf.Variable(1.0).op\n"
            "    print('op')\n"
            "except AttributeError:\n"
            "    print('AttributeError')\n"
            "print(bool(tf.reduce_all(tf.constant([1, 2]) == tf.constant([1, 2]))), tf.get_logger().propagate)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["AttributeError", "True", "True"]
