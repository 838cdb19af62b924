"""Export folders checked before step 1: a file in the way, a folder that cannot be written, a disk without room
for the SavedModel; each named with the exporter, before training writes anything."""

import os
import subprocess

import pytest
import tensorflow as tf

import common
from common.export import preflight
from tests import models

FEATURES, LABELS = models.blobs(64)


def _receiver():
    return common.build_raw_serving_input_receiver_fn(tf.TensorSpec([None, 4], tf.float32, name="x"))


def _train_and_evaluate(model_dir, hidden=4):
    est = common.Estimator(models.classifier_fn, str(model_dir), params={"hidden": hidden},
                           config=common.RunConfig(save_checkpoints_steps=5))
    return est, common.train_and_evaluate(
        est, common.TrainSpec(models.train_input(FEATURES, LABELS, 16), max_steps=5),
        common.EvalSpec(models.eval_input(FEATURES, LABELS, 32), steps=1, throttle_secs=0,
                        exporters=[common.LatestExporter("latest", _receiver())]))


def test_a_file_where_the_export_folder_goes_is_refused_before_step_1(tmp_path):
    (tmp_path / "model" / "export").mkdir(parents=True)
    (tmp_path / "model" / "export" / "latest").write_text("a file of the user's\n")
    with pytest.raises(preflight.ExportFolderError,
                       match=rf"exporter 'latest' exports to {tmp_path}/model/export/latest, but "
                             rf"{tmp_path}/model/export/latest is a file, not a folder"):
        _train_and_evaluate(tmp_path / "model")
    assert tf.train.latest_checkpoint(str(tmp_path / "model")) is None
    assert (tmp_path / "model" / "export" / "latest").read_text() == "a file of the user's\n"


def test_a_folder_that_cannot_be_written_or_lacks_room_is_named(small_disk):
    big = r"exporter 'big' exports to .*/small/export/big, which has 1\.5 MiB free; an export .* about 9\.0 MiB"
    with pytest.raises(preflight.ExportFolderError, match=big):
        preflight.check_export_folder("big", str(small_disk / "export" / "big"), 8 << 20)
    preflight.check_export_folder("small", str(small_disk / "export" / "small"), 100 << 10)  # fits, no error
    assert os.listdir(small_disk) == []  # the check leaves nothing behind
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        with pytest.raises(preflight.ExportFolderError, match=rf"exporter 'ro' exports to {small_disk}/export/ro, "
                                                              rf"but {small_disk} cannot be written: Read-only"):
            preflight.check_export_folder("ro", str(small_disk / "export" / "ro"), 0)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)


def test_a_fresh_model_too_big_for_the_export_disk_is_refused_at_its_first_checkpoint(small_disk):
    """The first checkpoint (before step 1) tells the model's size: 1.5 MiB of disk cannot hold its export."""
    model_dir = small_disk / "model"
    with pytest.raises(preflight.ExportFolderError, match="exporter 'latest' exports to .* MiB free"):
        _train_and_evaluate(model_dir, hidden=5000)  # a checkpoint of 0.3 MiB and the export's 1 MiB margin
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-0")
