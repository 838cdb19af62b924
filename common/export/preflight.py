"""Export folders checked before training, not at the first evaluation an hour in.

train_and_evaluate's exporters write under model_dir/export/<name>. A path
there that is a file, a folder that cannot be written, or a disk without
room for the SavedModel used to surface as a TensorFlow traceback at the
first export, after the first evaluation. `check_export_folder` is run on
each before step 1 (space against the newest checkpoint's size, which a
SavedModel's variables repeat); `SpaceCheck` runs again once the first
checkpoint of a fresh model dir exists. `checkpoint_to_export` refuses an
export with no trained checkpoint before anything is written.
"""

import errno
import os
import shutil
import tempfile

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.state import checkpoints
from common.state.checkpoint_store import CheckpointStore

MARGIN_BYTES = 1 << 20  # a SavedModel's graph and signatures beside its variables


class ExportFolderError(OSError):
    """An exporter's folder that cannot take its export; str() names the exporter, the folder and why."""


def _nearest_existing(path):
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def checkpoint_bytes(model_dir):
    """The size of the newest checkpoint's files in model_dir (0 when there is none)."""
    latest = CheckpointStore(model_dir).latest()
    if latest is None:
        return 0
    return sum(os.path.getsize(path) for path in tf.io.gfile.glob(latest + ".*") if os.path.isfile(path))


def check_export_folder(name, folder, needed_bytes):
    """Raises ExportFolderError when exporter `name` cannot write an export of about needed_bytes into folder."""
    if "://" in folder:  # (a remote file system: its own errors name it)
        return
    existing = _nearest_existing(os.path.abspath(folder))
    if not os.path.isdir(existing):
        raise ExportFolderError(errno.ENOTDIR, f"exporter {name!r} exports to {folder}, but {existing} is a file, "
                                "not a folder: move it away, or rename the exporter")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".export-preflight-")
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        raise ExportFolderError(error.errno, f"exporter {name!r} exports to {folder}, but {existing} cannot be "
                                f"written: {error.strerror}") from error
    free = shutil.disk_usage(existing).free
    if needed_bytes and free < needed_bytes + MARGIN_BYTES:
        raise ExportFolderError(errno.ENOSPC, f"exporter {name!r} exports to {folder}, which has {free / 2**20:.1f} "
                                f"MiB free; an export of this model takes about "
                                f"{(needed_bytes + MARGIN_BYTES) / 2**20:.1f} MiB: free some space, or export "
                                "elsewhere")


def check_exporters(model_dir, eval_specs):
    """check_export_folder for every exporter of the specs, against the newest checkpoint's size."""
    needed = checkpoint_bytes(model_dir)
    for spec in eval_specs:
        for exporter in spec.exporters:
            check_export_folder(exporter.name, os.path.join(model_dir, "export", exporter.name), needed)


class SpaceCheck:
    """A saving listener, for a fresh model dir only, that checks the exporters' folders again at its first
    checkpoint (step 0's, saved before step 1), when the model's size is first known."""

    hears_initial_save = True

    def __init__(self, eval_specs):
        self._specs = eval_specs
        self._done = False

    def after_save(self, estimator, step):
        if not self._done:
            self._done = True
            check_exporters(estimator.model_dir, self._specs)


def checkpoint_to_export(checkpoint_path, latest, warm_start_from, model_dir, allow_untrained):
    """The checkpoint an export reads: checkpoint_path, else model_dir's `latest`, else the warm-start
    checkpoint (as tf.estimator exported it); with none, None where allow_untrained asks for the initial model,
    else tf.estimator's "Couldn't find trained model" (a ValueError, nothing written)."""
    if checkpoint_path is not None or latest is not None or allow_untrained:
        return checkpoint_path
    if warm_start_from is None:
        raise ValueError(f"Couldn't find trained model at {model_dir}: no checkpoint to export (nothing was "
                         "written). Train first or give checkpoint_path=; export_saved_model(..., "
                         "allow_untrained=True) exports the model as it starts, untrained, on purpose")
    path = checkpoints.resolve(warm_start_from.ckpt_to_initialize_from, "warm_start_from")
    logging.info("Warm-starting the export from %s: model_dir %s holds no checkpoint.", path, model_dir)
    return path
