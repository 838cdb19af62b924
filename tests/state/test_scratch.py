"""A worker's scratch folder: named by its process, removed on exit, and removed by the next worker when its
process was killed (SIGKILL leaves it behind)."""

import os
import subprocess
import sys

from common.state import scratch


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_dead_workers_scratch_is_removed_by_the_next_and_a_live_ones_kept(tmp_path):
    dead = tmp_path / f"worker1_pid{_dead_pid()}_abc"
    (dead / "model").mkdir(parents=True)
    (dead / "model" / "model.ckpt-91.data-00000-of-00001").write_bytes(b"\0" * 1000)
    alive = tmp_path / f"worker2_pid{os.getpid()}_def"
    alive.mkdir()
    other = tmp_path / "worker1_notours"
    other.mkdir()
    with scratch.worker_scratch(3, str(tmp_path)) as path:
        assert os.path.basename(path).startswith(f"worker3_pid{os.getpid()}_")
        assert not dead.exists() and alive.exists() and other.exists()
        open(os.path.join(path, "x"), "w").close()
    assert not os.path.exists(path)
    assert sorted(os.listdir(tmp_path)) == sorted([alive.name, other.name])
