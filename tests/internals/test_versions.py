"""The tested range of TensorFlow and Keras: an older Keras refused in one line, a version outside the range
warned about once, a missing private name named with the version."""

import subprocess
import sys
import warnings

import pytest
from keras.src.backend.common import global_state

from common.internals import versions
from tests import ROOT


def test_a_version_is_read_as_its_minor_one():
    assert versions.minor("3.15.1") == (3, 15) and versions.minor("2.21.0rc1") == (2, 21)
    with pytest.raises(ValueError, match="not a version"):
        versions.minor("nightly")


def test_a_keras_older_than_tested_is_refused_in_one_line_naming_both_versions(monkeypatch):
    monkeypatch.setattr(versions, "keras_version", lambda: "3.3.3")
    monkeypatch.setattr(versions, "tensorflow_version", lambda: "2.16.2")
    with pytest.raises(versions.UnsupportedVersionError) as refused:
        versions.check()
    message = str(refused.value)
    assert "\n" not in message
    assert f"needs Keras >= {versions.KERAS_TESTED[0]}" in message and "Keras 3.3.3 with TensorFlow 2.16.2" in message


def test_a_version_outside_the_tested_range_is_warned_about_once(monkeypatch):
    monkeypatch.setattr(versions, "tensorflow_version", lambda: "2.99.0")
    monkeypatch.setattr(versions, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        versions.check()
        versions.check()
    said = [str(w.message) for w in caught]
    assert said == [f"TensorFlow 2.99.0 is outside the versions this project was tested with "
                    f"({versions.TENSORFLOW_TESTED[0]} to {versions.TENSORFLOW_TESTED[1]}, docs/VERSIONS.md); "
                    "it may fail"]


def test_the_installed_versions_are_in_the_tested_range_here():
    assert versions.minor(versions.TENSORFLOW_TESTED[0]) <= versions.minor(versions.tensorflow_version()) \
        <= versions.minor(versions.TENSORFLOW_TESTED[1])
    assert versions.minor(versions.KERAS_TESTED[0]) <= versions.minor(versions.keras_version()) \
        <= versions.minor(versions.KERAS_TESTED[1])


def test_a_private_name_keras_lacks_fails_in_one_line_naming_it_and_the_version(monkeypatch):
    monkeypatch.delattr(global_state, "get_global_attribute")
    with pytest.raises(versions.PrivateNameMissing) as missing:
        versions.private(global_state, "get_global_attribute", "Keras")
    assert str(missing.value) == (
        f"this project needs keras.src.backend.common.global_state.get_global_attribute, which Keras "
        f"{versions.keras_version()} does not have (tested: {versions.KERAS_TESTED[0]} to "
        f"{versions.KERAS_TESTED[1]}; docs/VERSIONS.md)")
    with pytest.raises(versions.PrivateNameMissing, match="needs tensorflow.python.ops.no_such_module"):
        versions.private_module("tensorflow.python.ops.no_such_module", "TensorFlow")


def test_import_common_refuses_an_old_keras_before_anything_else():
    code = ("import importlib.metadata as metadata\n"
            "real = metadata.version\n"
            "metadata.version = lambda name: '3.3.3' if name == 'keras' else real(name)\n"
            "import common\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "common.internals.versions.UnsupportedVersionError: this project needs Keras >= ")
