"""The upgrade's reads and writes: a user's file is read as Python reads it and never half-written.

A source is decoded by its PEP 263 coding declaration or BOM and written
back in the same encoding, BOM and line endings, so everything the rules do
not rewrite stays byte for byte. Every write goes to a temp file beside the
target and is renamed over it only when complete: an in-place upgrade on a
full disk leaves the input as it was. Anything that is not a readable
regular file (a FIFO would block forever, a symlink loop, a device) is a
`FileProblem` naming the path, for the caller to skip and report.
"""

import dataclasses
import io
import os
import shutil
import stat
import tempfile
import tokenize


class FileProblem(Exception):
    """A file the upgrade could not read or write; str() names it and says why."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = path


@dataclasses.dataclass(frozen=True)
class Source:
    """A Python file's text, and how to write text back as the file was written."""

    text: str
    encoding: str  # tokenize's name for it: "utf-8-sig" when the file starts with a BOM


def _regular_file(path):
    """os.stat of `path` (a symlink followed), refusing what is not a regular file."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise FileProblem(path, f"cannot be read: {error.strerror or error}") from error
    if not stat.S_ISREG(info.st_mode):
        raise FileProblem(path, "not a regular file (a FIFO, device or socket): skipped")
    return info


def read_source(path):
    """The file's Source, decoded as Python decodes it."""
    _regular_file(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as error:
        raise FileProblem(path, f"cannot be read: {error.strerror or error}") from error
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # a declaration Python does not know, or undeclared bytes that are not UTF-8
        encoding = "utf-8" if "missing" in str(error) else None
        if encoding is None:
            raise FileProblem(path, f"its coding declaration is not one Python reads: {error}") from error
    try:
        return Source(data.decode(encoding), encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise FileProblem(path, f"is not valid {encoding} at byte {error.start} (line {line}); Python could not "
                          "read it either "
                          "(declare its encoding with a '# -*- coding: ...' line)") from error


def _replace(path, write, mode):
    """Writes `path` through a temp file in its folder, renamed over it when complete."""
    folder = os.path.dirname(os.path.abspath(path))
    blocking = next((parent for parent in _parents(folder) if os.path.lexists(parent)), None)
    if blocking is not None and not os.path.isdir(blocking):
        raise FileProblem(path, f"cannot be written: {blocking} is a file, not a folder")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.isdir(path):
            raise FileProblem(path, "is a directory")
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".upgrade-tmp")
    except OSError as error:
        raise FileProblem(path, f"cannot be written: {error.strerror or error}") from error
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as error:
        os.unlink(temp)
        raise FileProblem(path, f"cannot be written ({error.strerror or error}); nothing there changed") from error
    except BaseException:
        os.unlink(temp)
        raise


def _parents(folder):
    """`folder` and its ancestors, nearest first."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _mode_for(path, like=None):
    """The mode a written file gets: the file it replaces keeps its own, a new one the source's or 0o644."""
    for candidate in (path, like):
        if candidate and os.path.isfile(candidate):
            return stat.S_IMODE(os.stat(candidate).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_source(path, text, like, encoding):
    """Writes `text` in `encoding` (BOM included for utf-8-sig) to `path`, atomically."""
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError as error:
        raise FileProblem(path, f"the upgraded text cannot be written in {encoding}: {error}") from error
    _replace(path, lambda f: f.write(data), _mode_for(path, like))


def write_text(path, text):
    """Writes a UTF-8 text file (the report) atomically."""
    _replace(path, lambda f: f.write(text.encode("utf-8")), _mode_for(path))


def copy_file(source, target):
    """Copies a regular file to `target` atomically (special files and unreadable ones are FileProblems)."""
    _regular_file(source)

    def write(f):
        try:
            with open(source, "rb") as src:
                shutil.copyfileobj(src, f)
        except OSError as error:
            raise FileProblem(source, f"cannot be read: {error.strerror or error}") from error

    _replace(target, write, _mode_for(target, source))
