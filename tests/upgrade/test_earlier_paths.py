"""Paths that earlier upgrades wrote into programs import the modules that live elsewhere now."""

import importlib
import subprocess
import sys

import pytest

from common.upgrade import earlier_paths
from tests import ROOT


@pytest.mark.parametrize("old,new", sorted(earlier_paths.MOVED.items()))
def test_an_old_path_imports_the_module_it_moved_to(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # (the module keeps its own spec)
    parent, _, leaf = old.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module  # `import common.x.y; common.x.y.name`


def test_an_old_path_works_in_a_fresh_process_as_a_program_wrote_it():
    """`import common.early_stopping` as the first import of a program (the upgrade wrote it so)."""
    code = ("import common.early_stopping\n"
            "print(common.early_stopping.stop_if_no_decrease_hook.__module__)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "common.training.early_stopping"


def test_a_name_that_never_existed_is_still_a_module_not_found():
    with pytest.raises(ModuleNotFoundError, match="common.tf1.no_such_module"):
        importlib.import_module("common.tf1.no_such_module")
