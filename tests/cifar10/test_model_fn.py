"""cifar10: ResNet sizes, flag checks, and learning through python -m cifar10.main."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from cifar10 import generate_cifar10_tfrecords as generator
from cifar10 import resnet
from tests import ROOT, cifar_files, ps_cluster


@pytest.mark.parametrize("num_layers,millions", [(20, 0.27), (32, 0.46), (44, 0.66), (56, 0.85), (110, 1.7)])
def test_parameter_counts_match_the_paper(num_layers, millions):
    model = resnet.ResNetCifar10(num_layers).build()
    count = sum(int(tf.size(v)) for v in model.trainable_variables)
    assert float(f"{count / 1e6:.2g}") == millions


def test_both_data_formats_give_the_same_logits():
    last = resnet.ResNetCifar10(20, data_format="channels_last").build()
    first = resnet.ResNetCifar10(20, data_format="channels_first").build()
    for source, target in zip(last.weights, first.weights):
        target.assign(source)
    images = tf.random.uniform([2, 32, 32, 3], 0, 255)
    infer = tf.function(lambda model, x: model(x, training=False))  # oneDNN's NCHW kernels exist in graphs only
    try:
        expected = infer(last, images)
        got = infer(first, images)
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError):
        pytest.skip("no NCHW convolution on this CPU without oneDNN (TF_ENABLE_ONEDNN_OPTS=0)")
    tf.debugging.assert_near(got, expected, atol=1e-4)


def run_main(*args, timeout=400):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", "cifar10.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("flags,message", [
    (["--num_layers=45"], "--num_layers=45 must be 6n+2"),
    (["--cpu_towers=3"], "--train_batch_size=128 must be a multiple of the number of towers (3)"),
    (["--cpu_towers=2", "--eval_batch_size=15"], "--eval_batch_size=15 must be a multiple of the number of towers (2)"),
    (["--variable_strategy=GPU"], "--variable_strategy=GPU needs GPU towers"),
    (["--num_gpus=2"], "--num_gpus=2 but this machine has 0 GPU(s)"),
    (["--synthetic_data=false", "--data_dir=/nonexistent"], "--data_dir=/nonexistent is not an existing directory"),
])
def test_flag_errors_name_the_flag_and_numbers(tmp_path, flags, message):
    result = run_main(f"--job_dir={tmp_path / 'job'}", "--synthetic_data", *flags)
    assert result.returncode == 1
    assert message in result.stderr
    assert not (tmp_path / "job").exists()


def test_missing_tfrecords_name_the_file_and_the_command(tmp_path):
    result = run_main(f"--job_dir={tmp_path / 'job'}", f"--data_dir={tmp_path}")
    assert result.returncode == 1
    assert f"{tmp_path}/train.tfrecords is missing; make it with: python -m cifar10.generate_cifar10_tfrecords" \
        in result.stderr
    assert not (tmp_path / "job").exists()


@pytest.fixture(scope="module")
def colour_data(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("cifar_colour"))
    cifar_files.make_tarball(directory, per_batch=100, learnable=True)
    generator.generate(directory)
    return directory


@pytest.mark.parametrize("towers", [[], ["--cpu_towers=2", "--variable_strategy=GPU"],
                                    ["--cpu_towers=2", "--variable_strategy=GPU", "--jit_compile"]])
def test_resnet20_learns_colours(colour_data, tmp_path, towers):
    result = run_main(f"--data_dir={colour_data}", f"--job_dir={tmp_path / 'job'}", "--num_layers=20",
                      "--train_steps=60", "--train_batch_size=32", "--eval_batch_size=50", "--learning_rate=0.1",
                      "--steps_per_loop=10", "--save_checkpoints_steps=60", "--random_seed=3", "--batch_norm_decay=0.9",
                      *towers)
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy = float(result.stdout.split("Eval accuracy: ")[1].split()[0])
    # chance is 0.1; after 60 steps seeds 3 and 4 land between 0.37 and 0.69 across these tower setups
    # (2026-11-23, TF1's momentum rule), so 0.3 says "learned" without betting on the seed
    assert accuracy > 0.3
    export_dir = result.stdout.split("SavedModel: ")[1].strip()
    served = tf.saved_model.load(export_dir).signatures
    as_uint8 = served["serving_uint8"](image=tf.zeros([2, 32, 32, 3], tf.uint8))["classes"]
    as_float = served["serving_default"](image=tf.zeros([2, 32, 32, 3]))["classes"]
    assert as_uint8.numpy().tolist() == as_float.numpy().tolist()


def test_without_sync_a_tf_config_with_ps_tasks_trains_asynchronously_as_the_official_example_did(tmp_path,
                                                                                                 processes):
    job_dir = tmp_path / "job"
    started = ps_cluster.job(tmp_path, processes, f"--job_dir={job_dir}", "--synthetic_data", "--num_layers=8",
                             "--train_batch_size=16", "--eval_batch_size=16", "--train_steps=30", "--eval_steps=2",
                             "--save_checkpoints_steps=10", "--num_gpus=0", program="cifar10.main")
    outputs = ps_cluster.finished(started)
    for task, (_, err) in outputs.items():
        assert started[task].returncode == 0, (task, err[-3000:])
    chief_out, chief_err = outputs[("chief", 0)]
    assert "The chief of a parameter-server job: variables on 2 ps task(s), steps on 2 worker(s)" in chief_err
    assert "Eval accuracy:" in chief_out and "(global step 30)" in chief_out
    assert ps_cluster.saved_steps(job_dir)[-1] == 30 and list((job_dir / "export").iterdir())
    ps_task = {"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]},
               "task": {"type": "ps", "index": 0}}
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", TF_CONFIG=json.dumps(ps_task))
    refused = subprocess.run([sys.executable, "-m", "cifar10.main", f"--job_dir={tmp_path / 'sync'}",
                              "--synthetic_data", "--sync"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=100)
    assert refused.returncode == 1
    assert "--sync trains the chief and workers together, but TF_CONFIG names ps tasks" in refused.stderr
