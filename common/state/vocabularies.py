"""The vocabulary files a model reads, fingerprinted in its model dir.

A vocabulary file (categorical_column_with_vocabulary_file, a lookup table
from a file) gives each word the id whose weights the model trains. Rewrite
it in another order between two train() calls, or before an export, and
tf.estimator went on with the words' weights swapped, silently. Here the
model dir records, when a run first saves, each vocabulary file's size,
line count and SHA-256 (vocabularies.json); a later run that restores from
the model dir with a file whose content changed is refused, naming the file
and what changed. Lines appended at the end keep every trained id: that is
allowed, with a warning (a column of a fixed vocabulary_size reads the new
words as out of vocabulary; one sized by the file grows, and its checkpoint's
weights no longer fit: that refusal names the file). The files are
found as TensorFlow opens them: every tf.lookup.TextFileInitializer made
while collecting() runs (the probes of model_fn) names its file here.
"""

import contextlib
import contextvars
import hashlib
import json
import os

import tensorflow as tf
from tensorflow.compat.v1 import logging

from common.internals.scoped_patches import ScopedPatch
from common.state import atomic

FILE = "vocabularies.json"
_COLLECTING = contextvars.ContextVar("common_vocabulary_files", default=None)


@contextlib.contextmanager
def collecting(files):
    """While entered, each vocabulary file a lookup table is initialized from is added to the set `files`
    (TensorFlow offers no hook: TextFileInitializer's constructor is replaced while any collecting() runs, and
    names its file only to the collecting() of its own thread)."""
    token = _COLLECTING.set(files)
    try:
        with _INIT_NAMING_FILES.active():
            yield files
    finally:
        _COLLECTING.reset(token)


def _opened(filename):
    files = _COLLECTING.get()
    value = filename if isinstance(filename, (str, bytes)) else tf.get_static_value(filename)
    if files is not None and isinstance(value, (str, bytes)) and value:
        files.add(value.decode() if isinstance(value, bytes) else value)


_TF_INIT = tf.lookup.TextFileInitializer.__init__


def _init(self, filename, *args, **kwargs):
    _opened(filename)
    _TF_INIT(self, filename, *args, **kwargs)


_INIT_NAMING_FILES = ScopedPatch(tf.lookup.TextFileInitializer, "__init__", _init)


_FINGERPRINTS = {}  # (path, size, mtime) -> fingerprint: a continuous evaluator checks at every checkpoint


def current(path):
    """fingerprint(path), read again only when a local file's size or modification time (in ns) changed."""
    if "://" in path:  # (a remote file system's times are not fine enough to trust)
        return fingerprint(path)
    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = fingerprint(path)
    return _FINGERPRINTS[key]


def fingerprint(path, lines=None):
    """{"size", "lines", "sha256"} of the file's content (its first `lines` lines, given them)."""
    digest, count, size = hashlib.sha256(), 0, 0
    with tf.io.gfile.GFile(path, "rb") as vocabulary:
        for line in vocabulary:
            if lines is not None and count == lines:
                break
            digest.update(line)
            count += 1
            size += len(line)
    return {"size": size, "lines": count, "sha256": digest.hexdigest()}


def _recorded(model_dir):
    path = os.path.join(model_dir, FILE)
    if not tf.io.gfile.exists(path):
        return {}
    with tf.io.gfile.GFile(path) as recorded:
        return json.load(recorded)


_WARNED_APPENDED = set()  # (path, sha256): the appended lines a warning has named in this process


def check(model_dir, files, what):
    """Refuses (ValueError) a vocabulary file in `files` whose content differs from what model_dir recorded for
    it, except lines appended (a warning); `what`: the run, for the message."""
    recorded = _recorded(model_dir)
    for path in sorted(files):
        before, now = recorded.get(path), current(path)
        if before is None or now == before:
            continue
        if _appended(path, before, now):
            if (path, now["sha256"]) in _WARNED_APPENDED:
                continue
            _WARNED_APPENDED.add((path, now["sha256"]))
            logging.warning("Vocabulary file %s has %d lines appended since %s was trained: every trained id is "
                            "kept; a column of a fixed vocabulary_size reads the new words as out of vocabulary.",
                            path, now["lines"] - before["lines"], model_dir)
            continue
        raise ValueError(
            f"{what}: the vocabulary file {path} changed since the model in {model_dir} was trained with it "
            f"({before['lines']} lines, {before['size']} bytes, sha256 {before['sha256'][:12]}... then; "
            f"{now['lines']} lines, {now['size']} bytes, sha256 {now['sha256'][:12]}... now): its words would "
            "take other words' weights. Restore the file it was trained with (lines may only be appended), or "
            "train a new model dir")


def _appended(path, before, now):
    return now["lines"] > before["lines"] and fingerprint(path, before["lines"]) == before


def grown(model_dir, files):
    """Why model_dir's checkpoint no longer fits when a file in `files` had lines appended since the model was
    trained ("" if none had): a feature column sized by the file grew, so its weights do not fit."""
    recorded = _recorded(model_dir)
    found = [(path, recorded[path]["lines"], current(path)["lines"]) for path in sorted(files)
             if path in recorded and _appended(path, recorded[path], current(path))]
    return " ".join(f"the vocabulary file {path} has {now - then} lines appended since the model was trained "
                    f"({then} then, {now} now): a feature column sized by the file grew with it; give it "
                    f"vocabulary_size={then} to go on training this model." for path, then, now in found)


def record(model_dir, files, fresh=False):
    """Adds to model_dir's record the fingerprint of each file in `files` it does not hold yet (of each of them,
    `fresh`: a model that starts new, trained with the files as they are now)."""
    recorded = _recorded(model_dir)
    added = {path: current(path) for path in sorted(files) if fresh or path not in recorded}
    if added:
        atomic.write_bytes(os.path.join(model_dir, FILE),
                           json.dumps({**recorded, **added}, indent=1, sort_keys=True).encode())
