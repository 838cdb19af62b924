"""Bad input on a model_dir that already holds a run: a clear message, status 1, not a byte changed."""

import os
import subprocess
import sys

import numpy as np
import pytest

from cifar10 import generate_cifar10_tfrecords as generator
from common.state import idx_files
from tests import ROOT, cifar_files


def run(module, *args):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def snapshot(directory):
    """{relative path: bytes} of every file under directory."""
    found = {}
    for folder, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = f.read()
    return found


@pytest.fixture(scope="module")
def mnist_run(tmp_path_factory):
    """A small IDX sample and a model_dir trained on it for 5 steps."""
    root = tmp_path_factory.mktemp("bad_input")
    data_dir, model_dir = root / "data", root / "model"
    data_dir.mkdir()
    rng = np.random.RandomState(0)
    for prefix, count in (("train", 200), ("t10k", 50)):
        idx_files.write_idx(str(data_dir / f"{prefix}-images-idx3-ubyte.gz"),
                           rng.randint(0, 256, (count, 28, 28)).astype(np.uint8))
        idx_files.write_idx(str(data_dir / f"{prefix}-labels-idx1-ubyte.gz"), (np.arange(count) % 10).astype(np.uint8))
    result = run("mnist.main", f"--data_dir={data_dir}", f"--model_dir={model_dir}", "--train_steps=5",
                 "--train_batch_size=20", "--eval_batch_size=25", "--steps_per_loop=5")
    assert result.returncode == 0, result.stderr[-3000:]
    return data_dir, model_dir


@pytest.mark.parametrize("flag,message", [
    ("--train_steps=-1", "--train_steps=-1"),
    ("--optimizer=bogus", "--optimizer=bogus"),
    ("--lr_schedule=cosine", "--lr_schedule=cosine"),
    ("--data_dir=/nonexistent/mnist", "--data_dir=/nonexistent/mnist does not exist"),
    ("--validation_fraction=1.5", "--validation_fraction=1.5"),
    ("--profile_steps=9", "--profile_steps must be two global steps FIRST,LAST with 1 <= FIRST <= LAST"),
    ("--profile_steps=4,2", "--profile_steps must be two global steps FIRST,LAST"),
])
def test_mnist_bad_flags_leave_the_model_dir_alone(mnist_run, flag, message):
    data_dir, model_dir = mnist_run
    before = snapshot(model_dir)
    result = run("mnist.main", f"--data_dir={data_dir}", f"--model_dir={model_dir}", "--train_steps=10", *flag.split())
    assert result.returncode == 1
    assert message in result.stderr
    assert snapshot(model_dir) == before


def test_mnist_bad_idx_header_is_named_and_changes_nothing(mnist_run, tmp_path):
    data_dir, model_dir = mnist_run
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in os.listdir(data_dir):
        (broken / name).write_bytes((data_dir / name).read_bytes())
    idx_files.write_idx(str(broken / "t10k-labels-idx1-ubyte.gz"), np.zeros(49, np.uint8))
    before = snapshot(model_dir)
    result = run("mnist.main", f"--data_dir={broken}", f"--model_dir={model_dir}", "--train_steps=10")
    assert result.returncode == 1
    assert "t10k-labels-idx1-ubyte.gz: 49 labels for 50 images" in result.stderr
    assert snapshot(model_dir) == before


def test_a_checkpoint_of_another_resnet_is_refused_untouched(tmp_path):
    job_dir = tmp_path / "job"
    common_flags = [f"--job_dir={job_dir}", "--synthetic_data", "--train_batch_size=8", "--eval_batch_size=8",
                    "--eval_steps=1", "--steps_per_loop=2"]
    first = run("cifar10.main", *common_flags, "--num_layers=20", "--train_steps=2")
    assert first.returncode == 0, first.stderr[-3000:]
    before = snapshot(job_dir)
    second = run("cifar10.main", *common_flags, "--num_layers=44", "--train_steps=4")
    assert second.returncode == 1
    assert "was written by a different model" in second.stderr
    assert "not in the checkpoint: resnet/stage1_block4_" in second.stderr
    assert snapshot(job_dir) == before


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_corrupt_tfrecord_is_named(tmp_path, damage):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    cifar_files.make_tarball(str(data_dir), per_batch=20)
    generator.generate(str(data_dir))
    train = data_dir / "train.tfrecords"
    raw = bytearray(train.read_bytes())
    if damage == "flip":
        raw[len(raw) // 2] ^= 0xFF
    else:
        raw = raw[: len(raw) - 700]
    train.write_bytes(bytes(raw))
    result = run("cifar10.main", f"--data_dir={data_dir}", f"--job_dir={tmp_path / 'job'}", "--num_layers=20")
    assert result.returncode == 1
    assert f"{train}: corrupt TFRecord data" in result.stderr
    assert not (tmp_path / "job").exists()


def test_a_usage_error_is_one_line_not_the_flag_help(tmp_path):
    result = run("mnist.main", "--data_dir=/nonexistent/mnist", f"--model_dir={tmp_path / 'model'}")
    assert result.returncode == 1
    assert "ERROR: --data_dir=/nonexistent/mnist does not exist (--helpfull lists every flag)" in result.stderr
    assert "Global steps to train to." not in result.stderr  # a flag's help text: no help printed


def test_a_model_dir_where_no_file_can_be_written_is_a_usage_error():
    result = run("mnist.main", "--model_dir=/proc/no_model_here", "--train_steps=1")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "ERROR: --model_dir=/proc/no_model_here is not writable (/proc: " in result.stderr
