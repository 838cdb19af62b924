"""A program's own module named `common`, renamed so that this project's package can be imported beside it.

This project's package is `common`, and the upgraded files import it. A
program tree that holds its own `common` (tensorflow/tpu's models/common, a
script's `common.py`) would shadow it, or be shadowed: either way one import
fails. So in a tree the upgrade writes the program's module as
`program_common` (its folder or file renamed in the output tree) and its
imports of it, and the names they bind, likewise, before the tree is
upgraded.
"""

import ast
import os
import re

from common.upgrade import positions
from common.upgrade.idioms import Change

OWN = "common"
RENAMED = "program_common"
_FROM_OWN = re.compile(r"from[ \t]+(common)\b")


def tree_holds_own(relative_paths):
    """Whether the tree's files (paths relative to its root) include a module or package named common."""
    return any(OWN in _parts(path)[:-1] or _parts(path)[-1] == OWN + ".py" for path in relative_paths)


def renamed_path(relative_path):
    """The output path of a tree's file: a `common` folder or `common.py` renamed."""
    parts = _parts(relative_path)
    parts = [RENAMED if part == OWN else part for part in parts[:-1]] + [
        RENAMED + ".py" if parts[-1] == OWN + ".py" else parts[-1]]
    return os.path.join(*parts)


def rename_imports(source):
    """(source, changes) with each absolute import of `common` (or its submodules) importing program_common,
    and the name `common` such an import binds read as program_common."""
    tree = ast.parse(source)
    lines = positions.source_lines(source)
    edits, binds = [], False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == OWN or alias.name.startswith(OWN + "."):
                    start = positions.position(lines, alias.lineno, alias.col_offset)
                    edits.append((start, (start[0], start[1] + len(OWN)), RENAMED))
                    binds = binds or alias.asname is None
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and (node.module == OWN or node.module.startswith(OWN + ".")):
            row, col = positions.position(lines, node.lineno, node.col_offset)
            found = _FROM_OWN.match(lines[row - 1], col)  # (a module name continued onto the next row: kept)
            if found:
                edits.append(((row, found.start(1)), (row, found.end(1)), RENAMED))
    if binds:
        edits.extend((positions.position(lines, n.lineno, n.col_offset),
                      positions.position(lines, n.end_lineno, n.end_col_offset), RENAMED)
                     for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == OWN)
    if not edits:
        return source, []
    first = min(edits)[0]
    return positions.apply_edits(source, edits), [Change(first[0], first[1], (
        f"renamed the program's own module {OWN} to {RENAMED} ({len(edits)} place(s)): this project's package is "
        f"{OWN}"))]


def _parts(relative_path):
    return os.path.normpath(relative_path).split(os.sep)
