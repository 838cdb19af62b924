"""`import common`: the public names, and an import that leaves TensorFlow as it was."""

import inspect
import os
import subprocess
import sys

import pytest

import common
from tests import ROOT


def test_import_common_loads_no_tensorflow_and_sets_nothing():
    code = ("import logging, os, sys\n"
            "before = dict(os.environ)\n"
            "import common\n"
            "print('tensorflow' in sys.modules, 'keras' in sys.modules, dict(os.environ) == before)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "True"]


@pytest.mark.parametrize("name", common.__all__)
def test_every_public_name_resolves(name):
    value = getattr(common, name)
    assert value is not None
    assert name in dir(common)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Estimater'"):
        common.Estimater  # noqa: B018


def test_the_public_modules_are_modules():
    assert inspect.ismodule(common.hooks) and inspect.ismodule(common.metrics)
    assert common.early_stopping.__name__ == "common.training.early_stopping"
