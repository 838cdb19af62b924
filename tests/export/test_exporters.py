"""Exporters in EvalSpec: the best and the final SavedModel kept, the newest N, atomic exports, restarts."""

import os

import numpy as np
import pytest
import tensorflow as tf

import common
from common.export import exporters
from tests import models

FEATURES, LABELS = models.blobs(96)
PEAK = 20  # the "score" metric rises to 0 at global step 20, then falls


def receiver():
    return common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4], tf.float32, name="x"))


def _exports(model_dir, name):
    folder = os.path.join(model_dir, "export", name)
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def _served_probabilities(export_dir):
    served = tf.saved_model.load(export_dir).signatures["serving_default"](x=tf.constant(FEATURES[:5]))
    return served["probabilities"].numpy()


def _predicted(est, step):
    checkpoint = os.path.join(est.model_dir, f"model.ckpt-{step}")
    return np.array([p["probabilities"] for p in est.predict(models.eval_input(FEATURES[:5], LABELS[:5], 5),
                                                             checkpoint_path=checkpoint)])


def _run(model_dir, max_steps, exporter_list):
    est = common.Estimator(models.scored_fn(PEAK), model_dir, params={"hidden": 4},
                           config=common.RunConfig(save_checkpoints_steps=10, keep_checkpoint_max=10))
    return est, common.train_and_evaluate(
        est, common.TrainSpec(models.train_input(FEATURES, LABELS, 16), max_steps=max_steps),
        common.EvalSpec(models.eval_input(FEATURES, LABELS, 32), steps=None, throttle_secs=0,
                        exporters=exporter_list))


def _exporters():
    return [common.BestExporter("best", receiver(), compare_fn=exporters.metric_better("score", True)),
            common.FinalExporter("final", receiver()),
            common.LatestExporter("latest", receiver(), exports_to_keep=2)]


def test_a_score_that_rises_then_falls_keeps_the_best_and_the_final_export(tmp_path):
    est, (results, paths) = _run(str(tmp_path), 40, _exporters())
    assert results["score"] == -400 and results["global_step"] == 40
    best, final, latest = (_exports(str(tmp_path), name) for name in ("best", "final", "latest"))
    assert len(best) == 2 and len(final) == 1 and len(latest) == 2  # best at steps 10 and 20; latest: 30 and 40
    assert paths == [os.path.join(tmp_path, "export", "final", final[0]),  # the final evaluation's exports
                     os.path.join(tmp_path, "export", "latest", latest[-1])]
    assert paths[0].decode("utf-8") == paths[0]  # tf.estimator gave bytes; programs decode them
    np.testing.assert_allclose(_served_probabilities(os.path.join(tmp_path, "export", "best", best[-1])),
                               _predicted(est, PEAK), rtol=1e-5)
    np.testing.assert_allclose(_served_probabilities(os.path.join(tmp_path, "export", "final", final[0])),
                               _predicted(est, 40), rtol=1e-5)
    assert not [n for name in ("best", "final", "latest") for n in _exports(str(tmp_path), name) if "temp" in n]

    # resumed with a new BestExporter: the events say step 20 was the best, and later steps score lower
    _, (resumed, _) = _run(str(tmp_path), 60, _exporters())
    assert resumed["global_step"] == 60 and _exports(str(tmp_path), "best") == best
    assert len(_exports(str(tmp_path), "final")) == 2


def test_an_export_that_fails_leaves_no_folder_training_goes_on_and_the_next_one_works(tmp_path, monkeypatch,
                                                                                      caplog):
    real_save = tf.saved_model.save

    def save_half_then_fail(module, path, signatures=None):
        tf.io.gfile.makedirs(os.path.join(path, "variables"))
        with open(os.path.join(path, "saved_model.pb"), "wb") as f:
            f.write(b"half")
        raise OSError("disk went away")

    monkeypatch.setattr(tf.saved_model, "save", save_half_then_fail)
    with caplog.at_level("ERROR"):
        est, (results, paths) = _run(str(tmp_path), 20, [common.LatestExporter("latest", receiver())])
    assert results["global_step"] == 20 and paths == []  # trained to the end; nothing exported
    assert os.listdir(os.path.join(tmp_path, "export", "latest")) == []
    for step in (10, 20):
        assert (f"exporter 'latest' could not export {tmp_path}/model.ckpt-{step} to {tmp_path}/export/latest: "
                "disk went away; training goes on") in caplog.text
    assert "This run's export that failed: exporter 'latest'" in caplog.text
    monkeypatch.setattr(tf.saved_model, "save", real_save)
    _, (_, paths) = _run(str(tmp_path), 30, [common.LatestExporter("latest", receiver())])
    assert _exports(str(tmp_path), "latest") == [os.path.basename(paths[0])]


def test_exporters_refuse_what_they_cannot_do_by_name():
    with pytest.raises(ValueError, match="an exporter's name must be a non-empty folder name"):
        common.LatestExporter("a/b", receiver())
    with pytest.raises(ValueError, match="an exporter's name must be a non-empty folder name"):
        common.LatestExporter("/", receiver())
    with pytest.raises(ValueError, match="LatestExporter 'x': exports_to_keep must be >= 1 or None, got 0"):
        common.LatestExporter("x", receiver(), exports_to_keep=0)
    with pytest.raises(TypeError, match="FinalExporter 'x': as_text must be True or False, got 1"):
        common.FinalExporter("x", receiver(), as_text=1)
    with pytest.raises(ValueError, match="BestExporter 'best_exporter': serving_input_receiver_fn is required"):
        common.BestExporter()
    with pytest.raises(ValueError, match="exporters need distinct names"):
        common.train_and_evaluate(None, common.TrainSpec(lambda: None), [
            common.EvalSpec(lambda: None, name="a", exporters=common.LatestExporter("x", receiver())),
            common.EvalSpec(lambda: None, name="b", exporters=[common.LatestExporter("x", receiver())])])
    with pytest.raises(KeyError, match="the evaluation has no 'score'"):
        exporters.metric_better("score", True)({"loss": 1.0}, {"loss": 0.5})


def test_an_exporter_named_with_a_trailing_slash_writes_its_folder_as_text_as_tf_estimator_did(tmp_path):
    _, (_, paths) = _run(str(tmp_path), 10, [common.LatestExporter("exporter/", receiver(), as_text=True)])
    (stamp,) = _exports(str(tmp_path), "exporter")
    assert paths == [os.path.join(tmp_path, "export", "exporter", stamp)]
    assert "saved_model.pbtxt" in os.listdir(paths[0]) and "saved_model.pb" not in os.listdir(paths[0])
    assert _served_probabilities(paths[0]).shape == (5, 3)
