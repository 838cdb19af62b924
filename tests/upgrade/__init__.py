"""Tests of common.upgrade, and the command they run as a user runs it."""

import os
import subprocess
import sys

from tests import ROOT


def upgrade_command(*flags, cwd=ROOT):
    """python -m common.upgrade run as a user runs it."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "common.upgrade", *flags], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env)
