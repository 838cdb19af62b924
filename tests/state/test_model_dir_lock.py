"""One writer per model_dir: a second is refused at once naming the holder; a killed one leaves no stale lock."""

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
        assert "training since 20" in err and "writer.lock" in err
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
