"""ModelBuilder: model_fn called without side effects, the model built by the first probe only."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import common
from common import hooks
from common.engine.model_builder import ModelBuilder
from tests import models

SIGNATURE = (tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([None], tf.int64))


def builder(params=None, frozen=None, plan=None):
    config = common.RunConfig(device_plan=plan or models.plan(1), tf_random_seed=1)
    return ModelBuilder(models.classifier_fn, dict(params or {"hidden": 8}), config, frozen)


def probe(model, mode):
    return model.probe(mode, SIGNATURE, lambda features, labels: (features, labels))


def test_the_first_probe_builds_and_reports_what_the_spec_offers():
    model = builder()
    assert not model.built and model.named_state(with_optimizer=True) == {}
    info = probe(model, common.ModeKeys.TRAIN)
    names = [t.name for t in model.model_variables]
    assert names == ["net/classifier/hidden/kernel", "net/classifier/hidden/bias",
                     "net/classifier/logits/kernel", "net/classifier/logits/bias"]
    assert info.scalars == ("batch_accuracy",)
    assert info.totals == ("count", "batch_loss_sum", "batches", "accuracy/sum", "accuracy/weight")
    assert info.predictions_dict and info.hooks == ()
    assert model.train_variables.optimizer.built and len(model.train_variables.trainable) == 4
    state = model.named_state(with_optimizer=True)
    assert set(names) < set(state) and "global_step" in state
    assert any(name.startswith("optimizer/") for name in state)
    assert not any(name.startswith("optimizer/") for name in model.named_state(with_optimizer=False))


def test_later_probes_and_calls_create_nothing_and_return_their_own_spec():
    model = builder()
    probe(model, common.ModeKeys.TRAIN)
    before = [id(t.variable) for t in model.model_variables]
    assert probe(model, common.ModeKeys.EVAL).totals[:3] == ("count", "batch_loss_sum", "batches")
    assert probe(model, common.ModeKeys.TRAIN) is probe(model, common.ModeKeys.TRAIN)  # kept per mode
    with model.scope():
        spec = model.call(tf.zeros([2, 4]), tf.zeros([2], tf.int64), common.ModeKeys.EVAL).spec
    assert spec.mode == common.ModeKeys.EVAL and spec.loss.shape.rank == 0
    assert [id(t.variable) for t in model.model_variables] == before


def test_a_call_that_would_create_a_variable_after_the_build_is_refused():
    def growing_fn(features, labels, mode):
        net = common.get_module("net", lambda: keras.layers.Dense(2, name="d"))
        extra = tf.Variable(1.0, name="sneaky") if mode == common.ModeKeys.EVAL else 1.0
        loss = tf.reduce_mean(net(features)) * extra
        return common.EstimatorSpec(mode, loss=loss, optimizer=common.get_optimizer(keras.optimizers.SGD))

    model = ModelBuilder(growing_fn, {}, common.RunConfig(), None)
    probe(model, common.ModeKeys.TRAIN)
    with pytest.raises(common.VariableCreationError, match="'sneaky', which its first call did not create"):
        probe(model, common.ModeKeys.EVAL)


def test_frozen_variables_are_held_out_of_the_optimizer():
    model = builder(frozen=re.compile("net/classifier/hidden/"))
    probe(model, common.ModeKeys.TRAIN)
    assert [t.name for t in model.train_variables.frozen] == ["net/classifier/hidden/kernel",
                                                               "net/classifier/hidden/bias"]
    assert [t.name for t in model.train_variables.trainable] == ["net/classifier/logits/kernel",
                                                                  "net/classifier/logits/bias"]


def test_variables_are_placed_by_the_plan_and_the_spec_hooks_are_reported():
    class Marker(hooks.Hook):
        pass

    marker = Marker()

    def fn_with_hooks(features, labels, mode, params):
        spec = models.classifier_fn(features, labels, mode, params)
        return spec._replace(training_hooks=(marker,))

    config = common.RunConfig(device_plan=models.plan(2, "GPU"))
    model = ModelBuilder(fn_with_hooks, {"hidden": 8}, config, None)
    assert probe(model, common.ModeKeys.TRAIN).hooks == (marker,)
    devices = {t.variable.device.split("/")[-1] for t in model.model_variables}
    assert devices == {"device:CPU:0", "device:CPU:1"}
    assert len(model.variable_placement) == 4


def test_a_model_fn_without_features_is_refused():
    with pytest.raises(ValueError, match="model_fn must take an argument named 'features'"):
        ModelBuilder(lambda inputs, mode: None, {}, common.RunConfig(), None)


def test_a_program_that_rebound_numpys_seed_to_a_number_still_trains_with_its_tf_random_seed(tmp_path, monkeypatch):
    monkeypatch.setattr(np.random, "seed", 19830610)  # a TF1 notebook's `np.random.seed = 19830610`
    est = common.Estimator(models.classifier_fn, str(tmp_path), params={"hidden": 2},
                           config=common.RunConfig(tf_random_seed=3))
    features, labels = models.blobs(16)
    est.train(models.one_batch(features, labels, 8), steps=1)
    assert np.random.seed == 19830610 and est.get_variable_value("global_step") == 1
