"""What a file's imports make its names stand for, and the imports the upgrade rewrites whole.

The rules are written for canonical names ("tf.estimator.Estimator",
"tf.compat.v1.train.AdamOptimizer"); a program reaches them through its own
imports: `import tensorflow.compat.v1 as tf` (its `tf.train.AdamOptimizer` is
tf.compat.v1's), `import tensorflow.compat.v1 as tf_compat`, `from
tensorflow import estimator as tf_estimator`. `tensorflow_aliases` maps each
local name bound to a TensorFlow module to its canonical name.

`from tensorflow.python.estimator.model_fn import ModeKeys` (and the same from
tensorflow_estimator or tensorflow.estimator) imports tf.estimator's names
from a module TensorFlow 2.21 no longer has; `estimator_imports` lists those
statements, for the rules to write them again from this project.
"""

import ast
import dataclasses
from typing import Dict, List, Optional, Tuple

from common.upgrade.positions import position

ESTIMATOR_MODULES = ("tensorflow.python.estimator", "tensorflow_estimator", "tensorflow.estimator",
                     "tensorflow.compat.v1.estimator")


def canonical_module(module) -> Optional[str]:
    """"tensorflow.compat.v1" -> "tf.compat.v1", "tensorflow.compat.v2.x" -> "tf.x"; None if not TensorFlow's."""
    if module == "tensorflow":
        return "tf"
    if not module.startswith("tensorflow."):
        return None
    rest = module[len("tensorflow."):]
    if rest == "compat.v2" or rest.startswith("compat.v2."):
        rest = rest[len("compat.v2"):].lstrip(".")
    return "tf." + rest if rest else "tf"


# TF1's contrib packages re-exported their implementation modules' names, which programs imported too
# (deeplab's `from tensorflow.contrib.layers.python.layers import layers`): a name there is the package's.
_IMPLEMENTATION_MODULES = {"tf.contrib.layers.python.layers": "tf.contrib.layers",
                           **{f"tf.contrib.layers.python.layers.{module}": "tf.contrib.layers"
                              for module in ("layers", "initializers", "regularizers")}}


def _package_of(canonical):
    return _IMPLEMENTATION_MODULES.get(canonical, canonical)


def _from_estimator(module):
    return any(module == m or module.startswith(m + ".") for m in ESTIMATOR_MODULES)


# tf.estimator's implementation modules, which TF1 programs imported (`from tensorflow.python.estimator import
# model_fn as model_fn_lib`): each held names tf.estimator (or its export, inputs) published.
ESTIMATOR_SUBMODULES = {**{name: "tf.estimator" for name in ("estimator", "estimator_lib", "model_fn", "run_config",
                                                             "training", "exporter")},
                        "export": "tf.estimator.export", "inputs": "tf.estimator.inputs"}


def _estimator_modules_import(node):
    """Whether `node` is `from <tf.estimator's package> import <its modules>` (which binds them, not names)."""
    return isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in (
        "tensorflow.python.estimator", "tensorflow_estimator.python.estimator") \
        and all(a.name in ESTIMATOR_SUBMODULES for a in node.names)


def tensorflow_aliases(tree) -> Dict[str, str]:
    """local name -> the canonical name of the TensorFlow module it is bound to (`tf` -> "tf" when the file
    binds nothing else to it)."""
    aliases = {"tf": "tf"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                canonical = canonical_module(alias.name)
                if canonical is not None:
                    aliases[alias.asname] = _package_of(canonical) if alias.asname \
                        else aliases.setdefault("tensorflow", "tf")
        elif _estimator_modules_import(node):
            aliases.update({a.asname or a.name: ESTIMATOR_SUBMODULES[a.name] for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and not _from_estimator(node.module):
            canonical = canonical_module(node.module)
            if canonical is not None:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = _package_of(f"{canonical}.{alias.name}")
    aliases.pop(None, None)
    return aliases


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else None


def module_assignments(tree, tensorflow_aliases, modules):
    """{local name: canonical module} for each module-level `name = tf.contrib.layers` whose module is one of
    `modules` (TF1 programs bound contrib's modules so), with where each target stands ((row, col) as ast
    counts), so the rules read `name.conv2d` as tf.contrib.layers.conv2d and leave the target alone."""
    found, targets = {}, set()
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        dotted = _dotted(node.value)
        head, _, rest = (dotted or "").partition(".")
        canonical = tensorflow_aliases.get(head)
        if canonical is not None and rest and f"{canonical}.{rest}" in modules:
            found[node.targets[0].id] = f"{canonical}.{rest}"
            targets.add((node.targets[0].lineno, node.targets[0].col_offset))
    return found, targets


def tensorflow_imports(tree):
    """ids of the ast.alias nodes that bind a name to a TensorFlow module (for scopes.shadowed_uses)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(id(a) for a in node.names if canonical_module(a.name) is not None)
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and not _from_estimator(
                node.module) and canonical_module(node.module) is not None) or _estimator_modules_import(node):
            found.update(id(a) for a in node.names)
    return found


@dataclasses.dataclass(frozen=True)
class EstimatorImport:
    """`from <a tf.estimator module> import name as local` statement: where it is and what it imports."""

    start: Tuple[int, int]  # (row, col) as tokenize counts them
    end: Tuple[int, int]
    names: List[Tuple[str, str]]  # (imported name, local name)
    module: str


def estimator_imports(tree, lines) -> List[EstimatorImport]:
    """Each `from <a tf.estimator module> import ...` statement of the file (`lines`: its source lines)."""
    return [EstimatorImport(position(lines, node.lineno, node.col_offset),
                            position(lines, node.end_lineno, node.end_col_offset),
                            [(a.name, a.asname or a.name) for a in node.names], node.module)
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
            and _from_estimator(node.module) and not _estimator_modules_import(node)]


@dataclasses.dataclass(frozen=True)
class GoneImport:
    """An import statement of tensorflow.contrib (gone since TensorFlow 2.0) or tf.estimator's module (gone
    since 2.16): where it is, where it sits, and what of it to keep."""

    start: Tuple[int, int]  # (row, col) as tokenize counts them
    end: Tuple[int, int]
    top_level: bool  # at the module's top level (a block must keep a statement)
    guarded: bool  # in the body of a try that catches a failed import (its fallback must still run)
    kept: Optional[str]  # the statement without its contrib names, when it imports others too
    bound: Dict[str, str] = dataclasses.field(default_factory=dict)  # local name its gone part binds -> what


# Not in TensorFlow 2.21 (tensorflow.examples held TF1's tutorials' readers, e.g. mnist's input_data).
GONE_MODULES = ("tensorflow.contrib", "tensorflow.estimator", "tensorflow_estimator", "tensorflow.examples",
                "tensorflow.compat.v1.estimator")
_TENSORFLOW_ROOTS = ("tensorflow", "tensorflow.compat.v1")  # (`from tensorflow.compat.v1 import estimator`: gone)


def _is_gone(module):
    return any(module == gone or module.startswith(gone + ".") for gone in GONE_MODULES)


def _gone_kept(node):
    """(whether the statement imports a module of GONE_MODULES, the statement without it or None). (`from
    <an estimator module> import` statements are estimator_imports', rewritten whole.)"""
    if isinstance(node, ast.Import):
        others = [a for a in node.names if not _is_gone(a.name)]
        found = len(others) < len(node.names)
        return found, ("import " + ", ".join(_spelled(a) for a in others)) if found and others else None
    if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
        return False, None
    if _estimator_modules_import(node) or (_is_gone(node.module) and not _from_estimator(node.module)):
        return True, None
    if node.module in _TENSORFLOW_ROOTS and any(_is_gone("tensorflow." + a.name) for a in node.names):
        others = [a for a in node.names if not _is_gone("tensorflow." + a.name)]
        return True, f"from {node.module} import {', '.join(_spelled(a) for a in others)}" if others else None
    return False, None


def _bound(node):
    """{local name: what it names} an import statement binds of its gone modules' part (`import
    tensorflow.contrib.x` binds tensorflow, which the file uses otherwise: not counted)."""
    if isinstance(node, ast.Import):
        return {a.asname: a.name for a in node.names if _is_gone(a.name) and a.asname}
    if node.module in _TENSORFLOW_ROOTS:
        return {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if _is_gone("tensorflow." + a.name)}
    return {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names}


def _spelled(alias):
    return alias.name + (f" as {alias.asname}" if alias.asname else "")


def _catches_import_errors(handler):
    names = [] if handler.type is None else (handler.type.elts if isinstance(handler.type, ast.Tuple)
                                             else [handler.type])
    return handler.type is None or any(isinstance(n, ast.Name) and n.id in (
        "ImportError", "ModuleNotFoundError", "Exception", "BaseException") for n in names)


def gone_imports(tree, lines) -> List[GoneImport]:
    """Each statement of the file that imports a module of GONE_MODULES (or one under it), or `contrib` or
    `estimator` from tensorflow."""
    top_level = {id(node) for node in tree.body}
    guarded = {id(statement) for node in ast.walk(tree) if isinstance(node, ast.Try)
               and any(_catches_import_errors(h) for h in node.handlers) for statement in node.body}
    found = []
    for node in ast.walk(tree):
        imports_contrib, kept = _gone_kept(node)
        if imports_contrib:
            found.append(GoneImport(position(lines, node.lineno, node.col_offset),
                                    position(lines, node.end_lineno, node.end_col_offset),
                                    id(node) in top_level, id(node) in guarded, kept, _bound(node)))
    return found


def import_lines(tree):
    """The line numbers import statements span (their module paths are not names the rules rewrite)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines
