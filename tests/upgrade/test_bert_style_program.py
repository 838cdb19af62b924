"""A BERT-style TF1 program (tests/programs/tf1_bert_style.py), upgraded by the command and run here, against the
same file on TF 2.15 + tensorflow-estimator: get_variable scopes under default_name="bert" reach the checkpoint
by TF1's names, its own tf.train.Optimizer subclass (slots by get_variable, gradients clipped by global norm)
updates as there, and init_from_checkpoint of the checkpoint tf.estimator 2.15 wrote starts the fine-tuning."""

import json
import os

import numpy as np
import pytest

from tests import DATA
from tests.programs import upgraded

with open(os.path.join(DATA, "tf215_bert_style.json")) as _f:
    REFERENCE = json.load(_f)
TF215_CHECKPOINT = os.path.join(DATA, "tf215_bert_style", "model.ckpt-3")


def _assert_values(estimator, expected):
    names = set(estimator.get_variable_names())
    assert set(expected) <= names, sorted(set(expected) - names)
    for name, value in expected.items():
        np.testing.assert_allclose(estimator.get_variable_value(name), np.array(value), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return upgraded("tf1_bert_style", str(tmp_path_factory.mktemp("upgraded")))


def test_pretraining_gives_tf_estimators_checkpoint_names_and_values(program, tmp_path):
    _assert_values(program.pretrain(str(tmp_path / "pre")), REFERENCE["pretrained"])


def test_fine_tuning_starts_from_the_checkpoint_tf_estimator_2_15_wrote(program, tmp_path):
    estimator, metrics = program.fine_tune(str(tmp_path / "fine"), TF215_CHECKPOINT)
    _assert_values(estimator, REFERENCE["fine_tuned"])
    for key, value in REFERENCE["eval"].items():
        assert metrics[key] == pytest.approx(value, rel=1e-5), key
