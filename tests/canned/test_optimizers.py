"""A premade estimator's optimizer argument: names at the estimator's rate, instances, callables."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from common import canned
from common.canned import optimizers
from common.tf1 import train as tf1_train
from tests.canned import reference


def test_a_name_gets_tf1s_optimizer_at_the_default_rate_and_instances_pass():
    adagrad = optimizers.optimizer_instance("Adagrad", 0.05)
    assert isinstance(adagrad, tf1_train.AdagradOptimizer) and adagrad._learning_rate == 0.05
    ftrl = tf1_train.FtrlOptimizer(0.1)
    assert optimizers.optimizer_instance(ftrl, 0.05) is ftrl
    assert isinstance(optimizers.optimizer_instance(lambda: keras.optimizers.SGD(0.1), 0.05), keras.optimizers.SGD)
    with pytest.raises(ValueError, match="'Adamax' is not one of"):
        optimizers.optimizer_instance("Adamax", 0.1)
    with pytest.raises(ValueError, match="got int"):
        optimizers.optimizer_instance(3, 0.1)


def test_a_keras_instance_is_remade_from_its_config_and_left_as_given():
    given = keras.optimizers.Adam(0.05, beta_1=0.8)
    made = optimizers.optimizer_instance(given, 0.01)
    assert made is not given and type(made) is keras.optimizers.Adam
    assert made.get_config()["beta_1"] == 0.8 and float(made.learning_rate) == pytest.approx(0.05)

    class Scaled(keras.optimizers.SGD):  # its config lacks an argument its constructor needs
        def __init__(self, scale, **kwargs):
            super().__init__(**kwargs)
            self.scale = scale

    with pytest.raises(ValueError, match="Scaled given to a premade estimator .* give a callable"):
        optimizers.optimizer_instance(Scaled(2.0, learning_rate=0.1), 0.05)


def test_a_keras_instance_resumes_in_a_process_that_made_other_optimizers(tmp_path):
    """Keras names optimizers per process (adam, adam_1, ...); the copy's state is saved under the class's name."""
    a, b, _ = reference.columns()
    for _ in range(2):
        keras.optimizers.Adam(0.1)  # (another optimizer of the process, between the runs)
        estimator = canned.LinearRegressor([a, b], model_dir=str(tmp_path), optimizer=keras.optimizers.Adam(0.05))
        estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=1)
    assert estimator.get_variable_value("model_fn/adam/iteration") == 2


@pytest.mark.parametrize("as_callable", [False, True])
def test_a_keras_learning_rate_schedule_decays_with_the_optimizers_step(tmp_path, as_callable):
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    given = (lambda: keras.optimizers.SGD(schedule)) if as_callable else keras.optimizers.SGD(schedule)
    x = np.arange(8, dtype=np.float32)
    estimator = canned.LinearRegressor([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path),
                                       optimizer=given)
    estimator.train(reference.train_input({"x": x}, x), steps=3)
    w = bias = 0.0
    for step in range(3):  # numpy: gradient descent on mean squared error at 0.1 * 0.5 ** step
        residual = w * x + bias - x
        w, bias = w - 0.1 * 0.5 ** step * 2 * np.mean(residual * x), bias - 0.1 * 0.5 ** step * 2 * np.mean(residual)
    assert float(estimator.get_variable_value("linear/linear_model/bias_weights")[0]) == pytest.approx(bias, rel=1e-5)


@pytest.mark.parametrize("given", [lambda: tf1_train.GradientDescentOptimizer(0.5), lambda: keras.optimizers.SGD(0.5)])
def test_tf1_and_keras_instances_train_a_premade_estimator_alike(given, tmp_path):
    a, b, _ = reference.columns()
    estimator = canned.LinearRegressor([a, b], model_dir=str(tmp_path), optimizer=given)
    estimator.train(reference.train_input(reference.FEATURES, reference.TARGETS), steps=1)
    x = np.stack([reference.FEATURES["a"], reference.FEATURES["b"]], 1)
    gradient = -2 * (reference.TARGETS[:, None] * x).mean(0)  # from zero weights
    np.testing.assert_allclose(estimator.get_variable_value("linear/linear_model/a/weights")[0, 0],
                               -0.5 * gradient[0], rtol=1e-5)


def test_a_loss_on_no_variable_is_refused():
    with tf.Graph().as_default():
        variable = tf.compat.v1.Variable(1.0)
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            optimizers.minimize(keras.optimizers.SGD(0.1), tf.constant(1.0), [variable])
    with pytest.raises(ValueError, match="no trainable variables"):
        optimizers.minimize(keras.optimizers.SGD(0.1), tf.constant(1.0), [])
