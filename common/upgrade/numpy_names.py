"""NumPy names TF1-era programs used that the NumPy TensorFlow 2.21 runs on no longer has.

NumPy 1.24 removed its aliases of Python's types (`np.int`, `np.float`,
`np.object`, `np.str`, `np.unicode`, `np.complex`, `np.bool`, `np.long`; TensorFlow's
own iris tutorial passed `target_dtype=np.int`), and NumPy 2.0 removed
more spellings (`np.float_`, `np.NaN`, `np.Inf`, `np.product`, ...). Each
is rewritten as NumPy's own advice says: the Python type, or the name that
stayed, through the alias the file imported NumPy as. `np.sum` of a generator,
which NumPy 1 summed with Python's `sum` (deprecated) and NumPy 2 refuses,
becomes that `sum` (BERT-NER's metrics summed a column so). Only names reached
through a module-level `import numpy` / `import numpy as np` are touched.
"""

import ast

from common.upgrade.idioms import Change
from common.upgrade.positions import position

# The Python type NumPy's alias stood for (removed in NumPy 1.24; np.bool and np.long came back in 2.0 as NumPy's
# bool and C long, which the NumPy 1.x that TensorFlow 2.16 and 2.17 run on lacks: Python's type serves both).
PYTHON_TYPES = {"int": "int", "float": "float", "object": "object", "str": "str", "unicode": "str",
                "complex": "complex", "bool": "bool", "long": "int"}
# What a spelling NumPy 2.0 removed meant, through the file's numpy alias ({np}).
_RENAMED_IN_2 = {"float_": "float64", "complex_": "complex128", "cfloat": "complex128", "longfloat": "longdouble",
                 "singlecomplex": "complex64", "string_": "bytes_", "unicode_": "str_", "NaN": "nan", "NAN": "nan",
                 "Inf": "inf", "Infinity": "inf", "infty": "inf", "PINF": "inf", "product": "prod",
                 "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all", "round_": "round", "mat": "asmatrix"}
NUMPY_2_NAMES = {**{old: "{np}." + new for old, new in _RENAMED_IN_2.items()}, "NINF": "(-{np}.inf)"}


def numpy_aliases(tree):
    """The names a module-level import binds to numpy itself."""
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import)
            for alias in node.names if alias.name == "numpy"}


def rewrites(tree, lines):
    """(edits, changes) renaming each removed NumPy name reached through the file's numpy alias."""
    aliases = numpy_aliases(tree)
    edits, changes = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _sums_a_generator(node, aliases):
            start = position(lines, node.func.lineno, node.func.col_offset)
            edits.append((start, position(lines, node.func.end_lineno, node.func.end_col_offset), "sum"))
            changes.append(Change(start[0], start[1], f"rewrote {node.func.value.id}.sum(generator) as sum(generator) "
                                  "(NumPy 1 summed a generator with Python's sum; NumPy 2 refuses it)"))
            continue
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and isinstance(node.ctx, ast.Load)):
            continue
        written = f"{node.value.id}.{node.attr}"
        if node.attr in PYTHON_TYPES:
            new, why = PYTHON_TYPES[node.attr], "NumPy 1.24 removed its aliases of Python's types"
        elif node.attr in NUMPY_2_NAMES:
            new, why = NUMPY_2_NAMES[node.attr].format(np=node.value.id), "NumPy 2.0 removed the name"
        else:
            continue
        start = position(lines, node.lineno, node.col_offset)
        edits.append((start, position(lines, node.end_lineno, node.end_col_offset), new))
        changes.append(Change(start[0], start[1], f"rewrote {written} as {new} ({why})"))
    return edits, changes


def _sums_a_generator(call, aliases):
    """Whether `call` is np.sum(<generator expression>) with nothing else (what NumPy 1 handed to Python's sum)."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "sum" and isinstance(func.value, ast.Name)
            and func.value.id in aliases and len(call.args) == 1 and isinstance(call.args[0], ast.GeneratorExp)
            and not call.keywords)
