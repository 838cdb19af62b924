"""The README's commands, run as written or in a short form (fewer steps, folders of the test's own).

Every command line of the README's code blocks must be listed in COMMANDS, so a command added to the README
without a way to run it here fails this test; a command that is not run says why.
"""

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests import ROOT, cifar_files, dogcat_files

README = os.path.join(ROOT, "README.md")

# A README command -> how this test runs it: extra flags that make it short, or why it is not run here.
COMMANDS = {
    "./run.sh": {"short": ["mnist", "--train_steps=10", "--eval_every_steps=10", "--model_dir={tmp}/mnist"]},
    "./run.sh test": {"not_run": "it is the suite this test is part of"},
    "python -m mnist.main --num_gpus=0 --cpu_towers=2 --model_dir=/tmp/mnist2": {
        "short": ["--train_steps=10", "--eval_every_steps=10", "--model_dir={tmp}/mnist2"]},
    "python -m cifar10.generate_cifar10_tfrecords --data_dir=/data/cifar10": {"short": ["--data_dir={tmp}/cifar10"]},
    "python -m cifar10.main --data_dir=/data/cifar10 --job_dir=/tmp/cifar --num_gpus=2 --variable_strategy=GPU": {
        "short": ["--data_dir={tmp}/cifar10", "--job_dir={tmp}/cifar", "--num_layers=8", "--train_steps=4",
                  "--train_batch_size=8", "--eval_batch_size=8"],
        "without_gpus": "--num_gpus=2 but this machine has 0 GPU(s)"},
    "python -m dogcat.main --data_dir=/data/dogs-vs-cats": {
        "short": ["--data_dir={tmp}/dogs-vs-cats", "--model_dir={tmp}/dogcat", "--train_steps=4",
                  "--train_batch_size=8", "--eval_batch_size=8", "--image_size=32"]},
    "python -m common.upgrade --infile=tests/programs/tf2_sequential.py --outfile=/tmp/tf2_sequential.py "
    "--reportfile=/tmp/upgrade_report.txt": {
        "short": ["--outfile={tmp}/tf2_sequential.py", "--reportfile={tmp}/upgrade_report.txt"]},
    "python -m common.upgrade --check_model_dir=tests/data/tf215_model_dirs/dnn_classifier/model": {"short": []},
}


def readme_blocks():
    """(language, text) of each fenced code block of the README."""
    with open(README, encoding="utf-8") as readme:
        return re.findall(r"^```(\w*)\n(.*?)^```", readme.read(), re.M | re.S)


def readme_commands():
    """The command lines of the README's shell blocks, comments dropped."""
    lines = [line.split("#", 1)[0].strip() for language, text in readme_blocks() if language in ("", "sh")
             for line in text.splitlines()]
    return [line for line in lines if line]


def test_every_readme_command_has_a_way_to_run_here():
    unknown = [command for command in readme_commands() if command not in COMMANDS]
    assert not unknown, f"README commands this test does not run: {unknown}"


def test_the_readme_is_a_short_page():
    with open(README, encoding="utf-8") as readme:
        assert len(readme.read().splitlines()) <= 300


def _run(argv, tmp_path, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", VENV=sys.prefix)
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def _argv(command, short, tmp_path):
    """The command's argv in its short form: later absl flags override earlier ones; `python` is this one."""
    argv = shlex.split(command) + [flag.format(tmp=tmp_path) for flag in short]
    if argv[0] == "./run.sh":
        return ["bash", *argv]
    return [sys.executable if argv[0] == "python" else argv[0], *argv[1:]]


def _prepare(command, tmp_path):
    """The data a command reads, made small in its real format under tmp_path."""
    if "cifar10" in command:
        (tmp_path / "cifar10").mkdir(exist_ok=True)
        cifar_files.make_tarball(str(tmp_path / "cifar10"), per_batch=8)
        if "cifar10.main" in command:
            generated = _run([sys.executable, "-m", "cifar10.generate_cifar10_tfrecords",
                              f"--data_dir={tmp_path}/cifar10"], tmp_path)
            assert generated.returncode == 0, generated.stderr[-3000:]
    if "dogcat" in command:
        dogcat_files.make_kaggle(str(tmp_path / "dogs-vs-cats"), num_train=16, num_test=4)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_readme_command_runs(command, tmp_path):
    how = COMMANDS[command]
    if "not_run" in how:
        pytest.skip(how["not_run"])
    if command.startswith("./run.sh") and not os.path.exists(os.path.join(sys.prefix, ".installed-cpu")):
        pytest.skip("./run.sh installs into its virtualenv first; this Python's environment is not one it made")
    _prepare(command, tmp_path)
    result = _run(_argv(command, how["short"], tmp_path), tmp_path)
    if "without_gpus" in how:  # (on this CPU machine: the official check, one clear line)
        assert result.returncode == 1 and how["without_gpus"] in result.stderr, result.stderr[-3000:]
        return
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_readme_model_fn_example_trains_and_evaluates(tmp_path):
    [example] = [text for language, text in readme_blocks() if language == "python"]
    model_dir = tmp_path / "model"
    script = tmp_path / "example.py"
    script.write_text(example.replace('"/tmp/readme_model"', repr(str(model_dir))))
    result = _run([sys.executable, str(script)], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy = float(result.stdout.strip().splitlines()[-1])
    assert 0.5 < accuracy <= 1.0
    assert any(name.startswith("model.ckpt-100") for name in os.listdir(model_dir))
