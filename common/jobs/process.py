"""How a program of this project starts: what it sets before TensorFlow loads, and `--help`.

This module imports no TensorFlow, so the dataset packages (`mnist`,
`cifar10`, `dogcat`) import it first and `python -m common.upgrade --help`
answers at once. A library import of `common` sets none of this: it is what
the project's own programs choose for themselves.
"""

import atexit
import os
import sys

from absl import app, flags

HELP_FLAGS = ("--help", "-help", "-h", "-?", "--helpshort")


def prepare_tensorflow(argv=None):
    """Sets, before TensorFlow loads (each only where the environment does not set it already):
    - TF_ENABLE_ONEDNN_OPTS=1: TensorFlow turns its oneDNN CPU kernels on by default only on x86 CPUs
      with AVX-512-class features; on the AVX2 machine this project was first measured on they train the
      MNIST CNN 1.6x faster (530 -> 865 ex/s). TF_ENABLE_ONEDNN_OPTS=0 keeps them off.

    When the program is asked for its flags (argv, default sys.argv, names a help flag), standard error is
    held back until run() prints them: TensorFlow's C++ libraries print their start-up lines (twice, one per
    library, whatever TF_CPP_MIN_LOG_LEVEL says) as they load, above the help. A failure before run() is
    printed all the same: the hold ends before Python reports it.
    """
    argv = sys.argv if argv is None else argv
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    if _asks_for_help(argv):
        _hold_stderr()


def run(main, argv=None, flags_module=None):
    """absl's app.run(main), but `--help` prints the program's flags on stdout and exits 0, where absl exits 1:
    the main module's docstring and flags (its own and those it adopted as key flags: the shared ones), or,
    given flags_module (a module object: a console command's, whose __main__ is pip's wrapper), its
    docstring and flags."""
    argv = sys.argv if argv is None else argv
    if _asks_for_help(argv):
        _release_stderr()
        if flags_module is None:
            app.usage(shorthelp=True, writeto_stdout=True, exitcode=0)
        print(f"{flags_module.__doc__}\n{flags.FLAGS.module_help(flags_module)}")
        sys.exit(0)
    app.run(main, argv=argv)


def _asks_for_help(argv):
    return any(arg in HELP_FLAGS for arg in argv[1:])


_held = {}  # "fd": the real standard error's duplicate while it is held


def _hold_stderr():
    if "fd" in _held:
        return
    sys.stderr.flush()
    _held["fd"] = os.dup(2)
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 2)
    report = sys.excepthook

    def excepthook(*info):
        _release_stderr()
        report(*info)
    sys.excepthook = excepthook
    atexit.register(_release_stderr)


def _release_stderr():
    fd = _held.pop("fd", None)
    if fd is not None:
        sys.stderr.flush()
        os.dup2(fd, 2)
        os.close(fd)
