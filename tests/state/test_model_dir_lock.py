"""One writer per model_dir: a second is refused at once naming the holder; a killed one leaves no stale lock."""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from common.state import model_dir_lock
from tests import ROOT
from tests.job_runs import run_job, start_long_run


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path):
    model_dir = tmp_path / "model"
    first = start_long_run(model_dir)
    try:
        started = time.time()
        code, out, err = run_job(model_dir, "--train_steps=5", "--hidden=8")
        assert code == 1 and "Traceback" not in err
        assert f"ERROR: model_dir {model_dir} is in use: pid {first.pid} on {socket.gethostname()}, " in err
        assert "which has trained in it since 20" in err and "until it exits, a notebook's kernel too" in err
        assert "writer.lock" in err
        assert time.time() - started < 60  # refused, not waiting for the first run
        assert first.poll() is None  # the first run trains on
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=120) == 143


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    model_dir = tmp_path / "model"
    first = start_long_run(model_dir)
    first.kill()
    first.wait(timeout=60)
    assert (model_dir / "writer.lock").exists()
    code, out, err = run_job(model_dir, "--train_steps=30", "--hidden=8")
    assert code == 0, err[-2000:]
    assert "is in use" not in err and "Finished at global step" in out


def test_a_second_evaluator_of_one_eval_dir_is_refused_naming_the_first(tmp_path):
    eval_dir = tmp_path / "model" / "eval"
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from common.state import model_dir_lock; "
                               f"model_dir_lock.hold_evaluator({str(eval_dir)!r}); print('held', flush=True); "
                               "sys.stdin.read()"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(model_dir_lock.ModelDirLockedError,
                           match=rf"another evaluator evaluates into {eval_dir}: pid {holder.pid} on "):
            model_dir_lock.hold_evaluator(str(eval_dir))
        model_dir_lock.hold_evaluator(str(tmp_path / "model" / "eval_other"))  # another name: its own lock
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    model_dir_lock.hold_evaluator(str(eval_dir))  # the first one ended: the OS dropped its lock


def test_a_clean_exit_removes_its_lock_files_and_a_later_writer_takes_a_fresh_one(tmp_path):
    """tf.estimator left no lock file behind; a SIGKILL still leaves one (above), which the OS has unlocked."""
    model_dir, eval_dir = tmp_path / "model", tmp_path / "model" / "eval"
    code, out, err = run_job(model_dir, "--train_steps=5", "--hidden=8")
    assert code == 0, err[-2000:]
    assert not (model_dir / "writer.lock").exists() and (model_dir / "checkpoint").exists()
    subprocess.run([sys.executable, "-c", "from common.state import model_dir_lock; "
                    f"model_dir_lock.hold({str(model_dir)!r}); model_dir_lock.hold_evaluator({str(eval_dir)!r})"],
                   cwd=ROOT, check=True)
    assert sorted(p.name for p in model_dir.iterdir() if p.name.endswith(".lock")) == []
    assert not (eval_dir / "evaluator.lock").exists()


def test_a_lock_file_removed_between_opening_and_locking_it_is_taken_again(tmp_path, monkeypatch):
    """The race a clean exit's removal opens: this process opened the old file, its holder removed it; the lock
    taken is then on a file no path names, so it is taken again on the new one."""
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    path = model_dir / "writer.lock"
    opened = []
    real_open = open

    def opening(file, *args, **kwargs):
        handle = real_open(file, *args, **kwargs)
        if str(file) == str(path) and not opened:
            opened.append(file)
            path.unlink()  # (the holder's exit, right after this open)
        return handle

    monkeypatch.setattr("builtins.open", opening)
    monkeypatch.setattr(model_dir_lock, "_HELD", {})
    model_dir_lock.hold(str(model_dir))
    held = model_dir_lock._HELD[str(path)]
    assert path.exists() and os.fstat(held.fileno()).st_ino == os.stat(path).st_ino
    held.close()
