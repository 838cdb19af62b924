"""The TensorFlow and Keras versions this project was tested with, and what happens outside them.

The project reads and replaces private state of TensorFlow and Keras (this
package's other modules), which a release can move: at import, or silently.
So the range benchmarks/version_matrix.sh last ran the whole suite on is
named here (docs/VERSIONS.md has its table), and `import common` checks the
installed versions from their package metadata, without importing them:
- a Keras older than the oldest tested is refused, in one line naming both
  versions: the private state the project needs is not there;
- a TensorFlow or Keras newer than tested, or a TensorFlow older, is allowed
  with one warning naming the version and the tested range.
A private name the project needs and the installed library lacks fails in
one line naming the name and the version (`private`), never with an
AttributeError from deep inside.
"""

import importlib
import importlib.metadata
import re
import warnings

TENSORFLOW_TESTED = ("2.16", "2.21")  # the oldest and the newest minor version the whole suite ran on
KERAS_TESTED = ("3.10", "3.15")  # older: Keras copied a tf.Variable it wraps (3.10 holds it), which model_fn refuses
_TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel",
                             "tensorflow-macos", "tf-nightly", "tf-nightly-cpu")
_warned = set()  # the libraries already warned about in this process


class UnsupportedVersionError(ImportError):
    """The installed Keras is older than any this project was tested with (it lacks private state it needs)."""


class PrivateNameMissing(ImportError):
    """A private name of TensorFlow or Keras that the project needs is missing from the installed version."""


def minor(version):
    """(major, minor) of a version string: "3.15.1" -> (3, 15); "2.21.0rc1" -> (2, 21)."""
    match = re.match(r"(\d+)\.(\d+)", version or "")
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return int(match.group(1)), int(match.group(2))


def installed(distributions):
    """The version of the first of `distributions` (pip names) that is installed, or None."""
    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def tensorflow_version():
    """The installed TensorFlow's version (whichever of its packages brings it), or None."""
    return installed(_TENSORFLOW_DISTRIBUTIONS)


def keras_version():
    """The installed Keras's version, or None."""
    return installed(("keras",))


def check():
    """What `import common` does: refuses a Keras older than KERAS_TESTED, warns once about a TensorFlow or
    Keras outside the tested range.

    Raises:
      UnsupportedVersionError: the installed Keras is older than KERAS_TESTED[0].
    """
    tensorflow, keras = tensorflow_version(), keras_version()
    if keras is not None and minor(keras) < minor(KERAS_TESTED[0]):
        raise UnsupportedVersionError(
            f"this project needs Keras >= {KERAS_TESTED[0]} (tested: {KERAS_TESTED[0]} to {KERAS_TESTED[1]}); "
            f"this environment has Keras {keras} with TensorFlow {tensorflow}: "
            f"pip install 'keras>={KERAS_TESTED[0]},<{_next(KERAS_TESTED[1])}'")
    for library, version, tested in (("TensorFlow", tensorflow, TENSORFLOW_TESTED), ("Keras", keras, KERAS_TESTED)):
        if version is None or library in _warned:
            continue
        if not minor(tested[0]) <= minor(version) <= minor(tested[1]):
            _warned.add(library)
            warnings.warn(f"{library} {version} is outside the versions this project was tested with "
                          f"({tested[0]} to {tested[1]}, docs/VERSIONS.md); it may fail", stacklevel=3)


def private(owner, name, library):
    """A private attribute of TensorFlow's or Keras's, read where the project needs it.

    Args:
      owner: a module (or its dotted name, imported here) or a class.
      name: the attribute's name.
      library: "TensorFlow" or "Keras", for the message.
    Returns:
      The attribute.
    Raises:
      PrivateNameMissing: the owner or the name is missing from the installed version.
    """
    label = owner if isinstance(owner, str) else getattr(owner, "__name__", repr(owner))
    try:
        if isinstance(owner, str):
            owner = importlib.import_module(owner)
        return getattr(owner, name)
    except (ImportError, AttributeError) as error:
        version = tensorflow_version() if library == "TensorFlow" else keras_version()
        tested = TENSORFLOW_TESTED if library == "TensorFlow" else KERAS_TESTED
        raise PrivateNameMissing(
            f"this project needs {label}.{name}, which {library} {version} does not have (tested: {tested[0]} "
            f"to {tested[1]}; docs/VERSIONS.md)") from error


def private_module(path, library):
    """A private module of TensorFlow's or Keras's ("keras.src.backend.common.global_state"), imported.

    Args:
      path: its dotted path.
      library: "TensorFlow" or "Keras", for the message.
    Returns:
      The module.
    Raises:
      PrivateNameMissing: the installed version has no such module.
    """
    parent, _, name = path.rpartition(".")
    private(parent, name, library)  # (the parent's own absence named as such)
    return importlib.import_module(path)


def _next(version):
    major, minor_version = minor(version)
    return f"{major}.{minor_version + 1}"
