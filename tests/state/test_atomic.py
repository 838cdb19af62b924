"""Atomic files: the target appears whole, or not at all, and no temporary file is left."""

import os

import pytest

from common.state import atomic


def test_write_text_replaces_the_file_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "state.txt"
    atomic.write_text(str(target), "first\n")
    atomic.write_text(str(target), "second\n")
    assert target.read_text() == "second\n"
    assert os.listdir(tmp_path / "sub") == ["state.txt"]


def test_a_failure_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "state.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk gone"):
        with atomic.atomic_path(str(target)) as temp:
            with open(temp, "w") as f:
                f.write("half")
            raise RuntimeError("disk gone")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["state.txt"]
