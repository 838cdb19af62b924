"""One writer per model dir: an OS lock held by the training process.

Two runs on one model dir would write each other's checkpoints. A run that
trains takes an exclusive flock on model_dir/writer.lock and holds it until
the process ends; the OS drops it when the process dies, kill -9 included,
so no stale lock is left. The file says who holds it (pid, host, start
time), for the refusal a second writer gets. Several Estimators of one
process share the lock. Reading jobs (evaluate, predict, export) take
none; an evaluator takes its eval dir's (one evaluator per eval name).
Paths on remote file systems (gs://, hdfs://) are not locked. A clean exit
removes the lock files it held (tf.estimator left none); one who opened a
file just before its holder removed it finds, once locked, that its path now
names another file, and takes the lock again.
"""

import atexit
import contextlib
import datetime
import fcntl
import json
import os
import socket

from tensorflow.compat.v1 import logging

LOCK_FILE = "writer.lock"
EVALUATOR_LOCK_FILE = "evaluator.lock"
_HELD = {}  # real path of a lock file -> its open file, for the life of the process


class ModelDirLockedError(RuntimeError):
    """Another process is training in this model dir."""


def _holder(path):
    try:
        with open(path, encoding="utf-8") as lock_file:
            info = json.loads(lock_file.read() or "{}")
        return (f"pid {info['pid']} on {info['host']}, which has trained in it since {info['started']} (a process "
                "keeps the model dir it trained in until it exits, a notebook's kernel too)")
    except (OSError, ValueError, KeyError):
        return "another process"


def writer_alive(model_dir):
    """Whether the process that last took model_dir's writer lock still runs: True or
    False where it ran on this host, None where that cannot be told (no lock file
    yet, another host, a remote file system)."""
    if "://" in model_dir:
        return None
    try:
        with open(os.path.join(model_dir, LOCK_FILE), encoding="utf-8") as lock_file:
            info = json.loads(lock_file.read() or "{}")
        pid, host = int(info["pid"]), info["host"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return process_alive(pid) if host == socket.gethostname() else None


def process_alive(pid):
    """Whether process `pid` of this host runs (under any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, under another user
        return True
    return True


def hold(model_dir):
    """Takes the writer lock of model_dir for this process, or raises ModelDirLockedError."""
    if "://" in model_dir:
        return
    _take(model_dir, LOCK_FILE, "model_dir {folder} is in use: {holder}, holds {path}. Wait for that process to "
          "end, or give this one another model_dir; evaluating or exporting from it needs no lock.")
    logging.info("Holding %s: no other run can train in %s while this one does.",
                 os.path.join(model_dir, LOCK_FILE), model_dir)


def hold_evaluator(eval_dir):
    """Takes the lock of an eval dir (model_dir/eval_<name>) for this process's evaluator, or raises
    ModelDirLockedError: two evaluators of one name would evaluate every checkpoint twice and collide on its
    exports."""
    if "://" in eval_dir:
        return
    _take(eval_dir, EVALUATOR_LOCK_FILE, "another evaluator evaluates into {folder}: {holder} holds {path}. Run "
          "one evaluator per model dir and eval name (give this one another EvalSpec name).")


def _take(folder, name, refusal):
    path = os.path.realpath(os.path.join(folder, name))
    if path in _HELD:  # (this process holds it: the evaluator asks at every evaluation)
        return
    os.makedirs(folder, exist_ok=True)
    lock_file = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        raise ModelDirLockedError(refusal.format(folder=folder, holder=_holder(path), path=path)) from None
    if not _names(path, lock_file):  # (its holder removed it at its exit, after this process opened it)
        lock_file.close()
        _take(folder, name, refusal)
        return
    lock_file.seek(0)
    lock_file.truncate()
    lock_file.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                "started": datetime.datetime.now().isoformat(timespec="seconds")}))
    lock_file.flush()
    _HELD[path] = lock_file


def _names(path, lock_file):
    """Whether `path` still names the open `lock_file`."""
    try:
        return os.stat(path).st_ino == os.fstat(lock_file.fileno()).st_ino
    except FileNotFoundError:
        return False


@atexit.register
def _remove_held_locks():
    """At a clean exit: each lock file this process holds removed while still locked, then released."""
    for path, lock_file in list(_HELD.items()):
        with contextlib.suppress(OSError):
            os.unlink(path)
        lock_file.close()
    _HELD.clear()
