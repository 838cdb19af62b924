"""python -m mnist.main end to end on a small IDX sample: train, eval, export, resume, flag errors."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

from tests import ROOT
from tests.mnist_files import sample_files


def run_main(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", "mnist.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory):
    return sample_files(str(tmp_path_factory.mktemp("mnist_sample")))


def small_run(sample_dir, model_dir, *extra):
    return run_main(f"--data_dir={sample_dir}", f"--model_dir={model_dir}", "--train_batch_size=32",
                    "--eval_batch_size=64", "--eval_every_steps=20", "--steps_per_loop=5", "--random_seed=1", *extra)


def test_train_eval_export_then_resume(sample_dir, tmp_path):
    model_dir = tmp_path / "model"
    first = small_run(sample_dir, model_dir, "--train_steps=40", "--cpu_towers=2", "--profile_steps=11,15")
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(list(model_dir.glob("plugins/profile/*/*.xplane.pb"))) == 1
    assert "Test accuracy: " in first.stdout and "on 200 images (global step 40)" in first.stdout
    accuracy = float(first.stdout.split("Test accuracy: ")[1].split()[0])
    assert accuracy > 0.5  # 40 steps of 32 real digits: far above chance (0.1)
    export_dir = first.stdout.split("SavedModel: ")[1].strip()
    served = tf.saved_model.load(export_dir).signatures["serving_default"](image=tf.zeros([3, 28, 28, 1]))
    assert served["probabilities"].shape == (3, 10)
    assert os.path.isdir(model_dir / "eval_validation") and os.path.isdir(model_dir / "eval_test")
    hparams = [v for path in model_dir.glob("events.out.tfevents.*") for record in tf.data.TFRecordDataset(str(path))
               for v in event_pb2.Event.FromString(record.numpy()).summary.value if v.tag.startswith("_hparams_")]
    assert len(hparams) == 1  # the flags, for TensorBoard's HParams view (decoded in tests/test_summaries.py)
    assert all(name.encode() in hparams[0].metadata.plugin_data.content
               for name in ("train_steps", "learning_rate", "cpu_towers", "variable_strategy"))

    second = small_run(sample_dir, model_dir, "--train_steps=60", "--cpu_towers=2")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resuming training at global step 40" in second.stderr
    assert "(global step 60)" in second.stdout
    third = small_run(sample_dir, model_dir, "--train_steps=60")
    assert third.returncode == 0, third.stderr[-3000:]
    assert "Skipping training since max_steps has already saved" in third.stderr


@pytest.mark.parametrize("flag,message", [
    ("--train_steps=-5", "--train_steps=-5"),
    ("--data_dir=/nonexistent/mnist", "--data_dir=/nonexistent/mnist does not exist"),
    ("--optimizer=rmsprop", "--optimizer"),
    ("--num_gpus=2", "--num_gpus=2 but this machine has 0 GPU(s)"),
    ("--cpu_towers=3", "--train_batch_size=32 must be a multiple of the number of towers (3)"),
    ("--lr_schedule=piecewise", "--lr_schedule=piecewise: piecewise_constant: 0 boundaries need 1 values, got 0"),
    ("--export_best=auc", "--export_best=auc: the evaluation reports accuracy, loss"),
    ("--clip_global_norm=0", "--clip_global_norm must be > 0"),
    ("--early_stopping_metric=loss:up", "--early_stopping_metric=loss:up: the direction after ':' must be max or min"),
    ("--validation_fraction=0 --early_stopping_metric=loss",
     "--early_stopping_metric=loss needs an evaluation during training"),
])
def test_bad_flags_fail_before_anything_is_written(sample_dir, tmp_path, flag, message):
    model_dir = tmp_path / "model"
    result = small_run(sample_dir, model_dir, "--train_steps=5", *flag.split())
    assert result.returncode == 1
    assert message in result.stderr
    assert not model_dir.exists()


def test_early_stopping_and_the_best_export_from_the_flags(sample_dir, tmp_path):
    """No improvement for 0 steps holds at the first evaluation (step 20): training stops at the next loop
    boundary, is evaluated there, and the best validation accuracy's SavedModel is kept."""
    model_dir = tmp_path / "model"
    result = small_run(sample_dir, model_dir, "--train_steps=100", "--early_stopping_metric=accuracy",
                       "--early_stopping_steps=0", "--export_best=accuracy")
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'No increase in metric "accuracy" for 0 steps' in result.stderr
    assert "Requesting early stopping at global step 25" in result.stderr
    assert "(global step 25)" in result.stdout
    best = sorted((model_dir / "export" / "best").iterdir())
    assert 1 <= len(best) <= 2
    served = tf.saved_model.load(str(best[-1])).signatures["serving_default"](image=tf.zeros([2, 28, 28, 1]))
    assert served["probabilities"].shape == (2, 10)


def test_unwritable_model_dir_is_refused(sample_dir, tmp_path):
    (tmp_path / "a_file").write_text("x")
    result = run_main(f"--data_dir={sample_dir}", f"--model_dir={tmp_path / 'a_file' / 'model'}")
    assert result.returncode == 1
    assert f"--model_dir={tmp_path / 'a_file' / 'model'} cannot be created: {tmp_path / 'a_file'} is a file" \
        in result.stderr
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        result = run_main(f"--data_dir={sample_dir}", f"--model_dir={locked / 'model'}")
        assert result.returncode == 1
        assert f"--model_dir={locked / 'model'} is not writable" in result.stderr


def test_corrupt_data_file_is_named(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (data_dir / name).write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x05abc")
    result = run_main(f"--data_dir={data_dir}", f"--model_dir={tmp_path / 'model'}")
    assert result.returncode == 1
    assert "train-images-idx3-ubyte: truncated data" in result.stderr
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize("towers", [[], ["--cpu_towers=2", "--jit_compile"]])
def test_float16_with_loss_scaling_trains(sample_dir, tmp_path, towers):
    result = small_run(sample_dir, tmp_path / "model", "--train_steps=20", "--dtype=float16", *towers)
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy = float(result.stdout.split("Test accuracy: ")[1].split()[0])
    assert accuracy > 0.3
    names = tf.train.list_variables(tf.train.latest_checkpoint(str(tmp_path / "model")))
    assert any("loss_scale" in name or "dynamic_scale" in name for name, _ in names)


@pytest.mark.parametrize("setting,expected", [(None, "True"), ("0", "False")])
def test_the_mains_load_tensorflow_with_onednn_kernels_unless_told_not_to(setting, expected):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_ENABLE_ONEDNN_OPTS", None)
    if setting is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = setting
    code = "import mnist.main\nfrom tensorflow.python.util import _pywrap_util_port as port\nprint(port.IsMklEnabled())"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == expected
