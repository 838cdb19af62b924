"""tf.contrib.training.HParams as TF1 programs used it: attributes, fixed types, parse, dicts, JSON; and passed as
an Estimator's params, read by attribute in model_fn and input_fn."""

import numpy as np
import pytest
import tensorflow as tf

import common
from common.contrib.hparams import HParams
from common.tf1 import train as tf1_train


def test_attributes_types_and_overrides_behave_as_contribs():
    hparams = HParams(learning_rate=0.01, hidden_units=[24, 16], use_bias=True, name="sms")
    assert hparams.learning_rate == 0.01 and hparams.hidden_units == [24, 16] and "use_bias" in hparams
    hparams.parse("learning_rate=0.5,hidden_units=[8,4,2],use_bias=false,name=spam")
    assert hparams.values() == {"learning_rate": 0.5, "hidden_units": [8, 4, 2], "use_bias": False, "name": "spam"}
    hparams.override_from_dict({"learning_rate": 1})  # an int widens to the float it replaces
    assert hparams.learning_rate == 1.0 and isinstance(hparams.learning_rate, float)
    assert HParams(a=1).parse_json('{"a": 3}').a == 3
    assert HParams(b=2, a=1).to_json(sort_keys=True) == '{"a": 1, "b": 2}'
    assert str(HParams(b=2, a=1)) == "[('a', 1), ('b', 2)]" and repr(HParams(a=1)) == "HParams([('a', 1)])"
    assert hparams.get("missing", 7) == 7
    hparams.add_hparam("dropout", 0.2)
    hparams.del_hparam("dropout")
    assert "dropout" not in hparams


def test_wrong_values_and_names_are_refused_by_name():
    hparams = HParams(steps=10, units=[1, 2])
    with pytest.raises(ValueError, match="Could not cast hparam 'steps' of type 'int' from value 'ten'"):
        hparams.parse("steps=ten")
    with pytest.raises(ValueError, match="Could not cast hparam 'steps' of type 'int' from value 0.5"):
        hparams.set_hparam("steps", 0.5)  # nothing narrows
    with pytest.raises(ValueError, match="Unknown hyperparameter type for rate"):
        hparams.parse("rate=0.1")
    with pytest.raises(ValueError, match="Must pass a list for multi-valued parameter: units"):
        hparams.set_hparam("units", 3)
    with pytest.raises(ValueError, match="Hyperparameter name is reserved: values"):
        HParams(values=1)
    with pytest.raises(ValueError, match="Multi-valued hyperparameters cannot be empty: units"):
        HParams(units=[])


def test_an_hparams_is_the_estimators_params_copied_as_tf_estimator_copied_them(tmp_path):
    hparams = HParams(learning_rate=0.5, batch_size=4)

    def input_fn(params):
        return tf.data.Dataset.from_tensors(([[1.0]], [[2.0]])).repeat().unbatch().batch(params.batch_size)

    def model_fn(features, labels, mode, params):
        weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, weight) - labels))
        optimizer = tf1_train.GradientDescentOptimizer(params.learning_rate)
        return common.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path), params=hparams)
    hparams.learning_rate = 100.0  # the estimator holds its own copy
    est.train(input_fn, steps=1)
    np.testing.assert_allclose(est.get_variable_value("w"), [[2.0]])  # 0 - 0.5 * 2 * (0 - 2)
    assert est.params.learning_rate == 0.5 and est.params is not est.params
