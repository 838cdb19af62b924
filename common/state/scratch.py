"""A non-chief host's scratch folder: its own, named by its process, and none left by a dead one.

Across hosts only the chief writes model_dir; a worker's train() writes its
checkpoints and summaries to a temp folder removed when training ends. A
worker killed with SIGKILL cannot remove it, so each scratch folder's name
carries its process id, and a worker starting on the host removes the
folders of its processes that are gone.
"""

import contextlib
import os
import re
import shutil
import tempfile

from tensorflow.compat.v1 import logging

from common.state.model_dir_lock import process_alive

_NAME = re.compile(r"^worker\d+_pid(\d+)_")


def remove_stale(folder=None):
    """Removes the scratch folders in `folder` (the temp dir) of processes that no longer run; returns them."""
    folder = folder or tempfile.gettempdir()
    removed = []
    for name in sorted(os.listdir(folder)):
        match = _NAME.match(name)
        path = os.path.join(folder, name)
        if match and os.path.isdir(path) and not os.path.islink(path) and not process_alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        logging.info("Removed the scratch folders of workers that are gone: %s", ", ".join(removed))
    return removed


@contextlib.contextmanager
def worker_scratch(worker_index, folder=None):
    """A temp folder for this worker's checkpoints, removed on exit (stale ones of dead workers first)."""
    remove_stale(folder)
    with tempfile.TemporaryDirectory(prefix=f"worker{worker_index}_pid{os.getpid()}_", dir=folder) as path:
        yield path
