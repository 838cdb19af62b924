"""Model dirs tf.estimator 2.15 wrote (tests/data/tf215_model_dirs: made by record.py there, with TensorFlow
2.15.1 + tensorflow-estimator 2.15.0) brought here: each kind's own TF 2.15 program, put through the upgrade,
evaluates, predicts, exports and resumes them as TF 2.15 did, and what it writes TF 2.15 loads again."""

import glob
import importlib.util
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from common.hooks.protocol import Hook
from common.upgrade import rules

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "tf215_model_dirs")
KINDS = sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d)))
BY_OBJECT = ("model_to_estimator",)  # tf.estimator saved the Keras model object by object: read, not written back


def _reference(kind):
    with open(os.path.join(HERE, kind, "reference.json")) as f:
        return json.load(f)


def _program(kind, tmp_path, warm_start_from=None):
    """The kind's TF 2.15 program through the upgrade, imported; given warm_start_from, its estimator is built
    with that warm_start_from, as its user would add it."""
    with open(os.path.join(HERE, kind, "program.py")) as f:
        upgraded, changes = rules.upgrade_source(f.read())
    assert not [c.describe(kind) for c in changes if c.refused]
    if warm_start_from is not None:
        assert upgraded.count("model_dir=model_dir,") == 1
        upgraded = upgraded.replace("model_dir=model_dir,",
                                    f"model_dir=model_dir, warm_start_from={warm_start_from!r},")
    path = tmp_path / f"{kind}_upgraded.py"
    path.write_text(upgraded)
    spec = importlib.util.spec_from_file_location(f"{kind}_upgraded", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model_dir(kind, tmp_path):
    target = tmp_path / "model"
    shutil.copytree(os.path.join(HERE, kind, "model"), target)
    return str(target)


def _assert_close(got, want, what):
    if isinstance(want, dict):
        for key, value in want.items():
            _assert_close(got[key], value, f"{what}[{key}]")
    elif isinstance(want, list) and want and isinstance(np.ravel(want)[0], str):
        assert [v.decode() if isinstance(v, bytes) else v for v in np.ravel(got)] == list(np.ravel(want)), what
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-5, atol=1e-6,
                                   err_msg=what)


class StepLosses(Hook):
    """Each step's loss, keyed by the global step before it (as the TF 2.15 programs recorded it)."""

    def __init__(self):
        self.losses = {}

    def steps_to_trigger(self, step):
        return 1

    def before_step(self, step):
        return ("loss",)

    def after_step(self, step, values, context):
        self.losses[str(step - 1)] = float(values["loss"])


@pytest.mark.parametrize("kind", KINDS)
def test_evaluate_predict_and_export_read_the_tf215_checkpoint_as_tf215_did(kind, tmp_path):
    reference, program = _reference(kind), _program(kind, tmp_path)
    est = program.build_estimator(_model_dir(kind, tmp_path))
    _assert_close(est.evaluate(program.eval_input_fn, steps=None), reference["evaluate"], "evaluate")
    predictions = list(est.predict(program.predict_input_fn))
    assert len(predictions) == len(reference["predict"])
    for got, want in zip(predictions, reference["predict"]):
        _assert_close(got, want, "predict")
    path = est.export_saved_model(str(tmp_path / "export"), program.serving_input_receiver_fn)
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    ours = {name: (s.method_name, sorted(s.inputs), sorted(s.outputs))
            for name, s in saved.meta_graphs[0].signature_def.items() if name != "__saved_model_init_op"}
    theirs = {name: (s["method_name"], sorted(s["inputs"]), sorted(s["outputs"]))
              for name, s in reference["export"]["meta_graphs"][0]["signatures"].items()}
    assert ours == theirs


@pytest.mark.parametrize("kind", KINDS)
def test_training_resumes_as_tf215_resumed_and_writes_what_tf215_reads(kind, tmp_path):
    reference, program = _reference(kind), _program(kind, tmp_path)
    model_dir = _model_dir(kind, tmp_path)
    est, losses = program.build_estimator(model_dir), StepLosses()
    est.train(program.train_input_fn, max_steps=9, hooks=[losses])
    _assert_close(losses.losses, reference["resume_train9"]["losses"], "the losses of steps 6-8")
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-9")
    tags = set()
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        tags.update(v.tag for e in tf.compat.v1.train.summary_iterator(path) for v in e.summary.value)
    # TensorBoard keeps every curve tf.estimator drew (model_to_estimator's "loss_1" was its loss again, named by a
    # Keras 2 name clash; the project writes it as "loss")
    assert set(reference["tags"]["model_step6"]) - {"loss_1"} <= tags
    if kind in BY_OBJECT:
        return
    written = {name for name, _ in tf.train.list_variables(model_dir)} - {"_common_optimizer_state"}
    assert written == set(reference["checkpoint_variables"])  # tf.estimator's names, so it can take the dir back
    # TF 2.15, given this model dir at step 9, evaluated to these numbers (reference["rollback"], record.py):
    _assert_close(est.evaluate(program.eval_input_fn, steps=None), reference["rollback"]["evaluate"], "rollback")
    # ... and trained on to step 11 with these losses: the optimizer state written here is the one TF 2.15 read
    losses = StepLosses()
    est.train(program.train_input_fn, max_steps=11, hooks=[losses])
    _assert_close(losses.losses, reference["rollback"]["train11"]["losses"], "the losses of steps 9-10")


@pytest.mark.parametrize("kind", [k for k in KINDS if k.startswith("tf1_")])
def test_a_tf1_era_dir_warm_starts_a_new_model_with_its_weights(kind, tmp_path):
    """A new model warm-started from every variable of a TF1-era dir (partitioned, sharded) takes its first
    step from the dir's weights: that step's loss is the one TF 2.15 had on resuming the dir (the same weights,
    the same first batch)."""
    reference = _reference(kind)
    program = _program(kind, tmp_path, warm_start_from=os.path.join(HERE, kind, "model"))
    est, losses = program.build_estimator(str(tmp_path / "new")), StepLosses()
    est.train(program.train_input_fn, max_steps=1, hooks=[losses])
    _assert_close(losses.losses["0"], reference["resume_train9"]["losses"]["6"], "the warm-started first loss")
