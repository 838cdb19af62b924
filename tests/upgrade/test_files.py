"""The upgrade's reads and writes: sources decoded as Python decodes them, written back byte for byte, never
half-written, and files that are not readable regular files named, not hung on."""

import os
import resource
import signal
import subprocess
import sys
import threading

import pytest

from common.upgrade import files
from tests import ROOT


def _roundtrip(tmp_path, data):
    path = tmp_path / "p.py"
    path.write_bytes(data)
    source = files.read_source(str(path))
    files.write_source(str(tmp_path / "q.py"), source.text, str(path), source.encoding)
    return source, (tmp_path / "q.py").read_bytes()


def test_bom_crlf_form_feeds_and_line_separators_come_back_byte_for_byte(tmp_path):
    data = "\ufeffimport tensorflow as tf\r\n\x0c\r\ns = 'a\u2028b\x1cc\x85'\r\n".encode("utf-8")
    source, written = _roundtrip(tmp_path, data)
    assert source.encoding == "utf-8-sig" and not source.text.startswith("\ufeff")
    assert written == data


def test_a_coding_declaration_is_honoured_both_ways(tmp_path):
    data = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    source, written = _roundtrip(tmp_path, data)
    assert source.encoding == "iso-8859-1" and "café" in source.text
    assert written == data


def test_bytes_python_cannot_decode_are_named_with_their_line(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"x = 1\nname = 'caf\xe9'\n")
    with pytest.raises(files.FileProblem, match=r"latin\.py: is not valid utf-8 at byte 17 \(line 2\)"):
        files.read_source(str(path))


def test_a_fifo_is_refused_at_once_and_a_symlink_loop_named(tmp_path):
    fifo = tmp_path / "p.py"
    os.mkfifo(fifo)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(_problem(files.read_source, str(fifo))), daemon=True)
    reader.start()
    reader.join(10)
    assert outcome and "p.py: not a regular file" in outcome[0]  # did not block on the FIFO
    loop = tmp_path / "loop.py"
    loop.symlink_to(loop)
    assert "loop.py: cannot be read" in _problem(files.read_source, str(loop))
    assert "p.py: not a regular file" in _problem(files.copy_file, str(fifo), str(tmp_path / "copy"))
    assert not (tmp_path / "copy").exists()


def _problem(function, *args):
    try:
        function(*args)
    except files.FileProblem as problem:
        return str(problem)
    return "no problem"


def test_a_write_that_fails_leaves_the_target_as_it_was_and_no_temp_file(tmp_path):
    target = tmp_path / "p.py"
    target.write_text("original\n")
    os.chmod(target, 0o750)

    def fail(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(files.FileProblem, match=r"p\.py: cannot be written \(No space left on device\)"):
        files._replace(str(target), fail, 0o644)
    assert target.read_text() == "original\n"
    assert sorted(os.listdir(tmp_path)) == ["p.py"]
    files.write_text(str(target), "new\n")  # a replaced file keeps its mode
    assert target.read_text() == "new\n" and os.stat(target).st_mode & 0o777 == 0o750


def test_a_real_file_size_limit_fails_the_write_not_the_file(tmp_path):
    """The process cannot grow files past 100 bytes (as on a full disk): the 1 kB rewrite fails, named."""
    target = tmp_path / "p.py"
    target.write_text("x = 1\n" * 200)
    script = ("import sys; from common.upgrade import files\n"
              "try:\n    files.write_text(sys.argv[1], 'y = 2\\n' * 200)\n"
              "except files.FileProblem as problem:\n    print(problem)\n")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))

    result = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, text=True,
                            preexec_fn=limit, timeout=60, cwd=ROOT)
    assert "p.py: cannot be written (File too large); nothing there changed" in result.stdout, result.stderr
    assert target.read_text() == "x = 1\n" * 200
    assert sorted(os.listdir(tmp_path)) == ["p.py"]
