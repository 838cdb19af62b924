"""Warm start: the matched variables copied from another checkpoint, all or nothing, errors naming them."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.state.warm_start import warm_start
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
