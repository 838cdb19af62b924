"""dogcat end to end: learning, submission.csv, a keras.applications backbone."""

import csv
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import common
from dogcat import input_fn, model_fn, submission
from tests import ROOT, dogcat_files


def test_submission_rows_are_sorted_and_clipped(tmp_path):
    path = str(tmp_path / "submission.csv")
    submission.write(path, [10, 2, 1], np.array([0.9999, 0.5, 0.0]), 0.005)
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows == [["id", "label"], ["1", "0.005000"], ["2", "0.500000"], ["10", "0.995000"]]


def test_main_learns_colour_and_writes_a_complete_submission(tmp_path):
    data = tmp_path / "data"
    test_labels = dogcat_files.make_kaggle(str(data), num_train=120, num_test=12)
    (data / "test" / "13.jpg").write_bytes(b"")  # undecodable: still gets a row
    model_dir = tmp_path / "model"
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-m", "dogcat.main", f"--data_dir={data}", f"--model_dir={model_dir}", "--image_size=32",
         "--train_steps=60", "--train_batch_size=16", "--eval_batch_size=16", "--learning_rate=1e-3",
         "--eval_every_steps=30", "--steps_per_loop=10", "--random_seed=1", "--cpu_towers=2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy = float(result.stdout.split("Validation accuracy: ")[1].split(",")[0])
    assert accuracy > 0.9
    assert "on 24 images (global step 60)" in result.stdout
    with open(model_dir / "submission.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "label"]
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 14))
    values = {int(r[0]): float(r[1]) for r in rows[1:]}
    assert values[13] == 0.5
    assert all(0.005 <= v <= 0.995 for v in values.values())
    correct = sum((values[i] > 0.5) == bool(label) for i, label in test_labels.items())
    assert correct >= 11
    assert "predicted 0.5" in result.stderr


def test_backbone_trains_evaluates_and_predicts(tmp_path):
    data = tmp_path / "data"
    dogcat_files.make_kaggle(str(data), num_train=16, num_test=4)
    files = input_fn.list_train(str(data / "train"))
    params = dict(image_size=32, learning_rate=1e-3, backbone="mobilenet_v2", backbone_weights=None, fine_tune=False)
    estimator = common.Estimator(model_fn.model_fn, str(tmp_path / "model"), params=params)
    train = input_fn.input_fn(files.paths, files.labels, 32, 8, training=True)
    estimator.train(train, steps=2)
    frozen = [n for n in estimator.get_variable_names() if "Conv1" in n and n.endswith("kernel")]
    assert frozen and not any(n.startswith("optimizer/") and "Conv1" in n for n in estimator.get_variable_names())
    results = estimator.evaluate(input_fn.input_fn(files.paths, files.labels, 32, 8, training=False))
    assert {"accuracy", "log_loss", "loss"} <= set(results)
    predictions = list(estimator.predict(input_fn.input_fn(files.paths[:5], [0] * 5, 32, 4, training=False)))
    assert len(predictions) == 5 and 0 <= predictions[0]["probabilities"] <= 1
    assert tf.io.gfile.exists(estimator.latest_checkpoint() + ".index")


@pytest.mark.filterwarnings("ignore:Skipping nested container", "ignore::DeprecationWarning")  # Keras, wrong files
def test_backbone_checks_name_the_flag_and_the_file(tmp_path):
    with pytest.raises(ValueError, match="--image_size=64 is below the 75 pixels --backbone=inception_v3 takes"):
        model_fn.check_backbone("inception_v3", 64)
    not_weights = tmp_path / "notes.h5"
    not_weights.write_text("these are not weights")
    with pytest.raises(ValueError, match=f"--backbone_weights={not_weights} is not an HDF5 weights file of "
                                         r"mobilenet_v2 without its top \(include_top=False\)"):
        model_fn.check_backbone("mobilenet_v2", 32, str(not_weights))
    other = tmp_path / "other.weights.h5"
    keras_model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    keras_model.save_weights(str(other))
    with pytest.raises(ValueError, match="is not an HDF5 weights file of mobilenet_v2 without its top"):
        model_fn.check_backbone("mobilenet_v2", 32, str(other))
    own = tmp_path / "mobilenet.weights.h5"
    tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(32, 32, 3),
                                      pooling="avg").save_weights(str(own))
    model_fn.check_backbone("mobilenet_v2", 32, str(own))  # the right file passes
