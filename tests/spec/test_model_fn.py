"""EstimatorSpec normalises its fields; check_spec names what a model_fn's answer lacks."""

import functools
import re

import pytest
import tensorflow as tf

import common
from common.spec import model_fn as model_fn_lib
from common.spec.model_fn import check_spec

TRAIN, EVAL, PREDICT = common.ModeKeys.TRAIN, common.ModeKeys.EVAL, common.ModeKeys.PREDICT


def test_mode_keys_match_tf_estimator():
    assert (TRAIN, EVAL, PREDICT) == ("train", "eval", "infer")
    assert common.ModeKeys.ALL == (TRAIN, EVAL, PREDICT)


def test_defaults():
    spec = common.EstimatorSpec(PREDICT)
    assert spec.mode == PREDICT
    assert spec.predictions is None and spec.loss is None and spec.optimizer is None
    assert spec.learning_rate is None
    assert spec.eval_metric_ops == {} and spec.scalars == {}
    assert spec.training_hooks == () and spec.evaluation_hooks == () and spec.prediction_hooks == ()


def test_fields_are_normalised_to_dicts_and_tuples():
    metric_ops = {"accuracy": object()}
    hook = object()
    spec = common.EstimatorSpec(
        EVAL, loss=tf.constant(1.0), eval_metric_ops=metric_ops, scalars=None,
        training_hooks=[hook], evaluation_hooks=(h for h in [hook, hook]), prediction_hooks=None)
    assert spec.eval_metric_ops == metric_ops
    assert spec.eval_metric_ops is not metric_ops  # a copy: later changes to the caller's dict do not leak in
    assert spec.scalars == {}
    assert spec.training_hooks == (hook,)
    assert spec.evaluation_hooks == (hook, hook)
    assert spec.prediction_hooks == ()


def test_fields_by_keyword_and_position():
    loss, optimizer, rate = tf.constant(0.5), object(), tf.constant(0.1)
    spec = common.EstimatorSpec(TRAIN, {"p": 1}, loss, optimizer, rate)
    assert spec.predictions == {"p": 1}
    assert spec.loss is loss and spec.optimizer is optimizer and spec.learning_rate is rate
    assert spec._replace(loss=None).loss is None


@pytest.mark.parametrize("mode", ["training", "predict", "TRAIN", None])
def test_bad_mode_raises_naming_it(mode):
    with pytest.raises(ValueError, match=r"mode must be one of .*'infer'.*got " + re.escape(repr(mode))):
        common.EstimatorSpec(mode)


def test_check_spec_accepts_complete_specs():
    loss = tf.constant(1.0)
    check_spec(common.EstimatorSpec(TRAIN, loss=loss, optimizer=object()), TRAIN)
    check_spec(common.EstimatorSpec(EVAL, loss=loss), EVAL)
    check_spec(common.EstimatorSpec(PREDICT, predictions={"y": tf.zeros([2])}), PREDICT)


def test_check_spec_lets_a_loss_of_unknown_rank_through():
    checked = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def model_fn(loss):
        check_spec(common.EstimatorSpec(EVAL, loss=loss), EVAL)
        checked.append(loss.shape.rank)
        return loss

    model_fn.get_concrete_function()
    assert checked == [None]


def test_check_spec_refuses_what_is_not_a_spec():
    with pytest.raises(ValueError, match="must return a common.EstimatorSpec, got dict"):
        check_spec({"loss": tf.constant(1.0)}, EVAL)
    with pytest.raises(ValueError, match="must return a common.EstimatorSpec, got NoneType"):
        check_spec(None, PREDICT)


def test_check_spec_refuses_a_spec_for_another_mode():
    spec = common.EstimatorSpec(EVAL, loss=tf.constant(1.0), optimizer=object())
    with pytest.raises(ValueError, match="called in mode 'train' but returned a spec for mode 'eval'"):
        check_spec(spec, TRAIN)


def test_check_spec_train_needs_loss_and_optimizer():
    with pytest.raises(ValueError, match="no loss in TRAIN mode"):
        check_spec(common.EstimatorSpec(TRAIN, optimizer=object()), TRAIN)
    with pytest.raises(ValueError, match=r"no optimizer \(or train_op\) in TRAIN mode"):
        check_spec(common.EstimatorSpec(TRAIN, loss=tf.constant(1.0)), TRAIN)


def test_check_spec_eval_needs_loss_but_no_optimizer():
    with pytest.raises(ValueError, match="no loss in EVAL mode"):
        check_spec(common.EstimatorSpec(EVAL, predictions={"y": tf.zeros([2])}), EVAL)


def test_check_spec_predict_needs_predictions_not_loss():
    with pytest.raises(ValueError, match="no predictions in PREDICT mode"):
        check_spec(common.EstimatorSpec(PREDICT, loss=tf.constant(1.0)), PREDICT)


@pytest.mark.parametrize("mode", [TRAIN, EVAL, PREDICT])
def test_check_spec_loss_must_be_scalar(mode):
    spec = common.EstimatorSpec(
        mode, predictions=tf.zeros([4]), loss=tf.zeros([4]), optimizer=object())
    with pytest.raises(ValueError, match=r"loss must be a scalar, got shape \(4,\)"):
        check_spec(spec, mode)


def test_a_partials_bound_argument_keeps_its_value_as_tf_estimator_kept_it():
    def model_fn(features, labels, mode, params, **kwargs):
        return features, labels, mode, params, kwargs

    bound = functools.partial(model_fn, params={"units": 3})
    assert model_fn_lib.named_arguments(bound) == ["features", "labels", "mode"]
    assert model_fn_lib.call_with_wanted_args(bound, {"features": 1}, {"labels": 2, "mode": "train", "params": {},
                                                                       "config": None}) == \
        (1, 2, "train", {"units": 3}, {})
