"""Warm start: the matched variables copied from another checkpoint, all or nothing, errors naming them."""

import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.state.warm_start import warm_start
from common.tf1 import train as tf1_train
from tests import DATA
from tests.state import MODEL_NAMES, model_variables, save


def test_warm_start_copies_only_the_matched_variables(tmp_path):
    source = model_variables(scale=4.0)
    source["head/kernel"] = tf.Variable(tf.fill([3, 1], 9.0))
    save(tmp_path / "source", 100, source)
    variables = model_variables(scale=1.0)
    variables["head/kernel"] = tf.Variable(tf.zeros([3, 1]))
    settings = common.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="net/")
    names = warm_start(settings, variables, MODEL_NAMES + ["head/kernel"], MODEL_NAMES + ["head/kernel"])
    assert names == MODEL_NAMES
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.full([2, 3], 4.0))
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    np.testing.assert_array_equal(variables["head/kernel"].numpy(), np.zeros([3, 1]))


def test_warm_start_default_regex_takes_every_model_variable_and_matches_from_the_start(tmp_path):
    path = save(tmp_path, 5, model_variables(scale=4.0))
    variables = model_variables(scale=1.0)
    assert warm_start(common.WarmStartSettings(path), variables, MODEL_NAMES, MODEL_NAMES) == MODEL_NAMES
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    # Only the given model names: neither the step nor optimizer state comes with a warm start.
    assert int(variables["global_step"].numpy()) == 0
    np.testing.assert_array_equal(variables["optimizer/momentum"].numpy(), np.full([2, 3], -1.0))
    # re.match: "dense" does not match "net/dense/..." names.
    assert warm_start(common.WarmStartSettings(path, "dense"), model_variables(), MODEL_NAMES,
                                  MODEL_NAMES) == []


def test_a_warm_start_regex_takes_trainable_variables_and_a_list_of_them_any_variable(tmp_path):
    """As tf.estimator: a regex string looks in TRAINABLE_VARIABLES only (a batch-norm statistic keeps its
    own value); a list of regexes in every model variable; None takes nothing."""
    path = save(tmp_path, 5, model_variables(scale=4.0))
    statistic = ["net/dense/bias"]  # standing for a non-trainable variable
    variables = model_variables(scale=1.0)
    assert warm_start(common.WarmStartSettings(path), variables, MODEL_NAMES, MODEL_NAMES[:1]) == \
        MODEL_NAMES[:1]
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 2.0))
    assert warm_start(common.WarmStartSettings(path, ["net/dense/b"]), variables, MODEL_NAMES,
                                  MODEL_NAMES[:1]) == statistic
    np.testing.assert_array_equal(variables["net/dense/bias"].numpy(), np.full([3], 8.0))
    assert warm_start(common.WarmStartSettings(path, None), variables, MODEL_NAMES, MODEL_NAMES) == []


def test_warm_start_errors_on_missing_variables(tmp_path):
    save(tmp_path, 5, model_variables())
    variables = model_variables()
    variables["net/extra/w"] = tf.Variable(1.0)
    with pytest.raises(common.CheckpointMismatchError,
                       match=r"variables matching 'net/' are not in that checkpoint: net/extra/w$"):
        warm_start(common.WarmStartSettings(str(tmp_path), "net/"), variables,
                               MODEL_NAMES + ["net/extra/w"], MODEL_NAMES + ["net/extra/w"])
    assert variables["net/extra/w"].numpy() == 1.0


def test_warm_start_errors_on_reshaped_variables_and_assigns_nothing(tmp_path):
    save(tmp_path, 5, model_variables(scale=4.0, kernel_shape=(2, 3)))
    variables = model_variables(scale=1.0, kernel_shape=(2, 3))
    variables["net/dense/bias"] = tf.Variable(tf.ones([5]))
    with pytest.raises(common.CheckpointMismatchError, match=r"shapes differ for net/dense/bias$"):
        warm_start(common.WarmStartSettings(str(tmp_path)), variables, MODEL_NAMES, MODEL_NAMES)
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.ones([2, 3]))


def test_warm_start_from_nowhere_says_so(tmp_path):
    with pytest.raises(ValueError, match="warm_start_from: no checkpoint found at"):
        warm_start(common.WarmStartSettings(str(tmp_path / "none")), model_variables(), MODEL_NAMES,
                               MODEL_NAMES)


def test_a_variable_named_otherwise_in_the_checkpoint_is_taken_under_its_old_name(tmp_path):
    source = model_variables(scale=4.0)
    source["old/kernel"] = source.pop("net/dense/kernel")
    path = save(tmp_path, 5, source)
    variables = model_variables(scale=1.0)
    settings = common.WarmStartSettings(path, var_name_to_prev_var_name={"net/dense/kernel": "old/kernel"})
    assert warm_start(settings, variables, MODEL_NAMES, MODEL_NAMES) == MODEL_NAMES
    np.testing.assert_array_equal(variables["net/dense/kernel"].numpy(), np.full([2, 3], 4.0))
    with pytest.raises(common.CheckpointMismatchError, match=r"not in that checkpoint: net/dense/kernel \(as nope\)"):
        warm_start(common.WarmStartSettings(path, var_name_to_prev_var_name={"net/dense/kernel": "nope"}),
                   model_variables(), MODEL_NAMES, MODEL_NAMES)
    with pytest.raises(ValueError, match="var_name_to_prev_var_name names head/w, which vars_to_warm_start='net/'"):
        warm_start(common.WarmStartSettings(path, "net/", var_name_to_prev_var_name={"head/w": "w"}),
                   model_variables(), MODEL_NAMES, MODEL_NAMES)


def test_vocabulary_remapping_is_refused_by_name():
    with pytest.raises(NotImplementedError, match=r"var_name_to_vocab_info=...\) for \['emb'\]"):
        common.WarmStartSettings("ckpt", ".*", {"emb": object()})


def _keras_layers_fn(features, labels, mode, params):
    """tests/data/tf215_model_dirs/keras_in_model_fn's model_fn, its output layer renamed "output_new"."""
    net = features["x"]
    for i, units in enumerate(params["hidden_units"]):
        net = tf.keras.layers.Dense(units, activation="relu", name=f"hidden_{i}")(net)
    output = tf.keras.layers.Dense(1, name="output_new")(net)
    loss = tf.reduce_mean(tf.square(output - labels))
    return common.EstimatorSpec(mode, loss=loss, train_op=tf1_train.GradientDescentOptimizer(0.0).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()))


def test_tf_estimators_names_warm_start_keras_layers_built_in_model_fn(tmp_path):
    """A program ported from tf.estimator names the variables as TF 2.15 did ("output_new/bias", where this
    project says "model_fn/output_new/bias"), in var_name_to_prev_var_name and in vars_to_warm_start, and reads
    a checkpoint TF 2.15 wrote: tf.estimator read them so, and so does this."""
    tf215 = os.path.join(DATA, "tf215_model_dirs", "keras_in_model_fn", "model")
    settings = common.WarmStartSettings(tf215, vars_to_warm_start=["hidden_.*", "output_new/(kernel|bias)$"],
                                        var_name_to_prev_var_name={"output_new/bias": "output/bias",
                                                                   "output_new/kernel": "output/kernel"})
    est = common.Estimator(_keras_layers_fn, str(tmp_path), params={"hidden_units": [4, 3]},
                           warm_start_from=settings)
    x, y = np.ones((8, 5), np.float32), np.ones((8, 1), np.float32)
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": x}, y)).repeat(), steps=1)  # (a learning rate of 0)
    theirs = tf.train.load_checkpoint(tf215)
    for ours, their_name in (("model_fn/output_new/bias", "output/bias"), ("model_fn/hidden_0/kernel",
                                                                              "hidden_0/kernel")):
        np.testing.assert_array_equal(est.get_variable_value(ours), theirs.get_tensor(their_name))
