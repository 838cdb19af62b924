"""How the project's programs start: TensorFlow's settings before it loads, and --help."""

import os
import subprocess
import sys

import pytest

from common.jobs import process
from tests import ROOT


def test_onednn_is_turned_on_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    process.prepare_tensorflow(["prog"])
    assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "1"
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    process.prepare_tensorflow(["prog"])
    assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "0"


@pytest.mark.parametrize("job,own_flag", [("mnist.main", "--train_steps"), ("cifar10.main", "--num_layers"),
                                          ("dogcat.main", "--image_size")])
def test_a_mains_help_lists_its_flags_and_the_shared_ones_and_exits_0(job, own_flag):
    result = subprocess.run([sys.executable, "-m", job, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # (TensorFlow's C++ start-up lines held back)
    for flag in (own_flag, "--variable_strategy", "--num_gpus", "--cpu_towers", "--steps_per_loop", "--random_seed"):
        assert flag in result.stdout, flag


def test_the_upgrades_help_lists_its_flags_without_loading_tensorflow():
    code = ("import runpy, sys\n"
            "sys.argv = ['common.upgrade', '--help']\n"
            "try:\n"
            "    runpy.run_module('common.upgrade', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as stop:\n"
            "    print('EXIT', stop.code, 'tensorflow' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "EXIT 0 False"
    for flag in ("--infile", "--outfile", "--intree", "--outtree", "--check_model_dir", "--reportfile"):
        assert flag in result.stdout, flag


def test_a_failure_while_help_holds_stderr_back_is_still_printed():
    code = ("import sys\n"
            "sys.argv = ['prog', '--help']\n"
            "from common.jobs import process\n"
            "process.prepare_tensorflow()\n"
            "raise ValueError('the import failed')\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "ValueError: the import failed" in result.stderr


def test_the_installed_console_command_is_the_upgrade():
    command = os.path.join(os.path.dirname(sys.executable), "estimator-upgrade")
    if not os.path.exists(command):
        pytest.skip("the project is not pip-installed in this environment (PYTHONPATH only)")
    result = subprocess.run([command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--infile" in result.stdout and "Rewrites a tf.estimator program" in result.stdout
