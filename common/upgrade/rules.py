"""What `python -m common.upgrade` changes in one source file, and how.

The rewrite works on tokens, not on a syntax tree, so everything it does
not change (comments, layout, quoting) stays as the owner wrote it. A rule
matches a dotted name by its longest known prefix: `tf.estimator.Estimator`
becomes `common.Estimator`, `tf.compat.v1.train.MomentumOptimizer` becomes
`common.tf1.train.MomentumOptimizer`; a name with no counterpart is
reported with its line and what to use instead. Each change and each
refusal is a `Change`.
"""

import ast
import functools
import importlib.util
import re
import tokenize

from common.upgrade import aliases, idioms, libraries, numpy_names, positions, scopes, tf_names
from common.upgrade.idioms import Change
from common.upgrade.renames import KERAS_PREFIXES, MODULE_RENAMES, REMOVED_CALLS, RENAMES, TF1_MEANINGS, UNSUPPORTED


class NotRewritable(ValueError):
    """Valid Python the upgrade cannot rewrite without changing what it does not own."""


LONE_CR = re.compile(r"\r(?!\n)")
KERAS_LR = re.compile(r"(^|\.)optimizers\.(legacy\.)?[A-Z]\w*$")


def _dotted_names(tokens):
    """(dotted name, first token index, last token index) of every maximal a.b.c chain."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == tokenize.NAME and not (i > 0 and tokens[i - 1].string == "."):
            j = i
            while j + 2 < len(tokens) and tokens[j + 1].string == "." and tokens[j + 2].type == tokenize.NAME:
                j += 2
            yield ".".join(tokens[k].string for k in range(i, j + 1, 2)), i, j
            i = j + 1
        else:
            i += 1


def _longest_prefix(name, table):
    best = None
    for prefix in table:
        if (name == prefix or name.startswith(prefix if prefix.endswith(".") else prefix + ".")) \
                and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def _statement_is_only(tokens, first, last):
    """Whether tokens[first..last] followed by "()" is the whole logical line."""
    before = tokens[first - 1] if first > 0 else None
    after = tokens[last + 3] if last + 3 < len(tokens) else None
    return (last + 2 < len(tokens) and tokens[last + 1].string == "(" and tokens[last + 2].string == ")"
            and (before is None or before.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                                                   tokenize.DEDENT, tokenize.COMMENT, tokenize.ENCODING))
            and (after is None or after.type in (tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER)))


def _keyword_lr(tokens, call_open):
    """Indexes of `lr` keyword tokens at depth 1 of the call whose "(" is tokens[call_open]."""
    depth, found = 0, []
    for k in range(call_open, len(tokens)):
        text = tokens[k].string
        if text in "([{" and tokens[k].type == tokenize.OP:
            depth += 1
        elif text in ")]}" and tokens[k].type == tokenize.OP:
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and text == "lr" and k + 1 < len(tokens) and tokens[k + 1].string == "=" \
                and tokens[k - 1].string in ("(", ","):
            found.append(k)
    return found


def _estimator_import(statement, tf1_program):
    """The statement importing tf.estimator's names from this project (an edit), or a refusal; a TF1
    original's premade estimators are TF1's."""
    groups = {}
    for name, local in statement.names:
        canonical = "tf.estimator." + name
        if tf1_program:
            canonical = TF1_MEANINGS.get(canonical, canonical)
        target = RENAMES.get(canonical) or RENAMES.get("tf.estimator.export." + name)
        if target is None or "." not in target:
            return None, Change(statement.start[0], statement.start[1], f"from {statement.module} import {name}: "
                                "this project has no counterpart of it", refused=True)
        module, _, attribute = target.rpartition(".")
        groups.setdefault(module, []).append(attribute if attribute == local else f"{attribute} as {local}")
    text = "; ".join(f"from {module} import {', '.join(names)}" for module, names in groups.items())
    return (statement.start, statement.end, text), Change(statement.start[0], statement.start[1],
                                                          f"rewrote the import from {statement.module}: {text}")


def _gone_import(statement, lines, unconverted):
    """(edit, Change) for an import of a module TensorFlow 2.21 lacks: taken out when its names are all
    rewritten; when a name it binds is still used unconverted, that name bound to common.contrib.gone's stand-in,
    which says what is missing where the use runs (ALBERT imported contrib's metrics for one task of many:
    kept, the import stopped every task), and reported."""
    left = sorted(set(statement.bound) & unconverted)
    if left and not statement.guarded:
        stand_ins = "; ".join(f"{name} = common.contrib.gone.Gone({statement.bound[name]!r})" for name in left)
        return (statement.start, statement.end, f"{statement.kept}; {stand_ins}" if statement.kept else stand_ins), \
            Change(statement.start[0], statement.start[1], "replaced this import of tensorflow.contrib, tf.estimator "
                   f"or tensorflow.examples: {', '.join(left)} it binds still have uses with no counterpart here (the "
                   "ERROR lines), which fail where they run, saying what is missing", refused=True)
    return _gone_import_removal(statement, lines), Change(
        statement.start[0], statement.start[1], "removed the import of tensorflow.contrib, tf.estimator or "
        "tensorflow.examples (TensorFlow 2.21 has none of them): its names are rewritten below, or reported as "
        "ERROR")


def _gone_import_removal(statement, lines):
    """The edit that takes an import of a module TensorFlow 2.21 lacks (aliases.GONE_MODULES) out: the
    statement without those names when it imports others; in a try that catches a failed import, a raise
    of the ImportError TensorFlow 2 would raise (the fallback runs, as it would have); at the top level,
    alone on its lines, each line commented out; else `pass` (a block must keep a statement)."""
    if statement.kept is not None:
        return statement.start, statement.end, statement.kept
    if statement.guarded:
        return statement.start, statement.end, 'raise ImportError("TensorFlow 2.21 has no such module")'
    before = lines[statement.start[0] - 1][:statement.start[1]]
    after = lines[statement.end[0] - 1][statement.end[1]:].strip()
    if not statement.top_level or before.strip() or (after and not after.startswith("#")):
        return statement.start, statement.end, "pass"
    rows = range(statement.start[0], statement.end[0] + 1)
    text = "".join(lines[row - 1] for row in rows).rstrip("\r\n")
    commented = "\n".join("# " + line for line in text.split("\n"))
    return (statement.start[0], 0), (statement.end[0], len(lines[statement.end[0] - 1].rstrip("\r\n"))), commented


def _canonical(name, tensorflow_aliases):
    """(canonical name, how many of its components the name's first tokens stand for (0: not TensorFlow's),
    how many tokens those are): `tf.compat.v1.x` where tf is tf.compat.v1 is tf.compat.v1.x, read from three."""
    head, _, rest = name.partition(".")
    expansion = tensorflow_aliases.get(head)
    if expansion is None:
        return name, 0, 1
    if expansion == "tf.compat.v1" and (rest == "compat.v1" or rest.startswith("compat.v1.")):
        return expansion + rest[len("compat.v1"):], 3, 3
    return expansion + ("." + rest if rest else ""), expansion.count(".") + 1, 1


def _rename(tokens, first, canonical, head_size, head_tokens=1):
    """(prefix of `canonical` RENAMES knows, the index of its last token), or (None, None)."""
    prefix = _longest_prefix(canonical, RENAMES)
    if prefix is None:
        return None, None
    covered = prefix.count(".") + 1 - head_size  # tokens after the head's the prefix spans
    if covered < 0:
        return None, None
    return prefix, first + 2 * (head_tokens - 1 + covered)


def _inside_renamed_module(name, tensorflow_aliases):
    """(what the name's head stands for, that renamed) when it stands for something inside a module RENAMES
    renames whole (tf.contrib.slim's nets), which a prefix of the name cannot reach; else None."""
    expansion = tensorflow_aliases.get(name.split(".")[0], "")
    module = _longest_prefix(expansion, [m for m in MODULE_RENAMES if m in RENAMES])
    if module is None or module == expansion:
        return None
    return expansion, RENAMES[module] + expansion[len(module):]


def _is_tf1_program(names, tensorflow_aliases):
    """Whether the file was written against TF1's API: it names, through plain `tf`, something TensorFlow 2
    keeps only in tf.compat.v1 (tf.get_variable, tf.logging, tf.train.AdamOptimizer), or tf.estimator.inputs,
    which only TF1 had at tf.estimator."""
    for name in names:
        canonical, head_size, head_tokens = _canonical(name, tensorflow_aliases)
        if head_size and canonical.startswith("tf.estimator.inputs."):
            return True
        if head_size and head_tokens == 1 and tensorflow_aliases.get(name.split(".")[0]) == "tf" \
                and tf_names.compat_v1_name(canonical) is not None:
            return True
    return False


def _rewrite_name(tokens, first, last, name, tensorflow_aliases, tf1_program):
    """(edits, changes, the name as the rules read it afterwards) for one dotted name; in a tf1_program, a
    name whose TF1 meaning TensorFlow 2 changed is moved to tf.compat.v1 too."""
    start = tokens[first].start
    canonical, head_size, head_tokens = _canonical(name, tensorflow_aliases)
    if head_size == 0:
        if not name.startswith(KERAS_PREFIXES):
            return [], [], name
        canonical, head_size = name, 1  # Keras's own names: read as written
    if canonical in REMOVED_CALLS:
        if _statement_is_only(tokens, first, last):
            return ([(start, start, "# "), (tokens[last + 2].end, tokens[last + 2].end,
                                            "  # removed by common.upgrade: this project runs TF2 eagerly")],
                    [Change(start[0], start[1], f"commented out {name}(): this project runs TF2 eagerly")], name)
        return [], [Change(start[0], start[1], f"{name}() must go: this project runs TF2 eagerly", refused=True)], name
    inside = _inside_renamed_module(name, tensorflow_aliases) if head_tokens == 1 else None
    if inside is not None:  # `nets` of `from tensorflow.contrib.slim import nets`: the head spelled out renamed
        head, renamed = inside
        return [(start, tokens[first].end, renamed)], [Change(start[0], start[1], f"renamed {head} to {renamed}")], \
            renamed + name[len(name.split(".")[0]):]
    tf_head = head_tokens == 1 and tensorflow_aliases.get(name.split(".")[0]) == "tf"
    plain_tf = tf_head and _longest_prefix(canonical, UNSUPPORTED) is None
    # A TF1 original's names mean what TF1's meant: moved to tf.compat.v1 (which keeps that meaning) before any
    # rule renames them (its tf.summary.image is TF1's); in a TF2-era file only a name TF 2 lacks, no rule took.
    tf1_prefix = _longest_prefix(canonical, TF1_MEANINGS) if tf1_program else None
    if tf1_prefix is not None:
        moved = TF1_MEANINGS[tf1_prefix] + canonical[len(tf1_prefix):]
    else:
        moved = tf_names.compat_v1_name(canonical, True) if tf1_program and plain_tf else None
    if canonical in MODULE_RENAMES:  # the module itself: spelled out, it is renamed; a name bound to it, kept
        if "." not in name:
            return [], [], name
        return [(start, tokens[last].end, MODULE_RENAMES[canonical])], [
            Change(start[0], start[1], f"renamed the module {canonical} to {MODULE_RENAMES[canonical]}")], canonical
    prefix, prefix_last = (None, None) if moved else _rename(tokens, first, canonical, head_size, head_tokens)
    if moved is None and prefix is None and plain_tf:
        moved = tf_names.compat_v1_name(canonical)
    if moved is not None:
        prefix, prefix_last = _rename(tokens, first, moved, head_size + 2)
        if prefix is None:  # spelled so, then read by the rules as that
            edits = [(start, tokens[first].end, tokens[first].string + ".compat.v1")]
            return edits, [Change(start[0], start[1], f"moved {canonical} to {moved}")], moved
        canonical = moved
    if prefix is not None:
        edits = [(start, tokens[prefix_last].end, RENAMES[prefix])]
        return edits, [Change(start[0], start[1], f"renamed {prefix} to {RENAMES[prefix]}")], \
            RENAMES[prefix] + canonical[len(prefix):]
    unsupported = _longest_prefix(canonical, UNSUPPORTED)
    if unsupported is not None:
        return [], [Change(start[0], start[1], f"{name}: {UNSUPPORTED[unsupported]}", refused=True)], canonical
    if canonical.startswith("tf.") and not tf_names.exists(idioms.as_imported(canonical)):
        return [], [Change(start[0], start[1], f"{name}: the installed TensorFlow has no {canonical} and the "
                           "upgrade knows no counterpart of it", refused=True)], canonical
    return [], [], canonical


def _tensorflow_names(source, tree, lines, tokens, tensorflow_aliases):
    """(name, first token, last token) of each dotted name the rules read: not on an import line, not a
    keyword argument's name, not a local name that shadows a TensorFlow alias, not the target of a module
    alias (`layers = tf.contrib.layers`, whose name is added to tensorflow_aliases here)."""
    import_lines = aliases.import_lines(tree)
    assigned, targets = aliases.module_assignments(tree, tensorflow_aliases, MODULE_RENAMES)
    tensorflow_aliases.update(assigned)
    shadowed = {positions.position(lines, *use) for use in scopes.shadowed_uses(
        tree, set(tensorflow_aliases), aliases.tensorflow_imports(tree))}
    shadowed |= {positions.position(lines, *target) for target in targets}
    shadowed |= {positions.position(lines, node.lineno, node.col_offset) for node in ast.walk(tree)
                 if isinstance(node, ast.keyword) and node.arg}  # (`tpu_config=` names an argument, not a module)
    return [(name, first, last) for name, first, last in _dotted_names(tokens)
            if tokens[first].start[0] not in import_lines and tokens[first].start not in shadowed]


def is_tf1_source(source):
    """Whether one Python source text was written against TF1's API (see _is_tf1_program)."""
    tree = ast.parse(source)
    tensorflow_aliases = aliases.tensorflow_aliases(tree)
    names = _tensorflow_names(source, tree, positions.source_lines(source), positions.tokens_of(source),
                              tensorflow_aliases)
    return _is_tf1_program([name for name, _, _ in names], tensorflow_aliases)


def upgrade_source(source, tf1_tree=False, tree_packages=()):
    """(new source, [Change]) for one Python source text (SyntaxError or ValueError if it is not Python).
    tf1_tree: the file belongs to a program another file of which is TF1's (the names then mean TF1's).
    tree_packages: the top-level packages of the tree being upgraded (a library built on tf.estimator that is
    one of them is being upgraded: its imports of itself are not refused)."""
    tree = ast.parse(source)
    if LONE_CR.search(source):
        raise NotRewritable("it ends lines with a lone CR (classic Mac OS), which the upgrade does not rewrite: "
                         "convert it to LF or CRLF first")
    lines = positions.source_lines(source)
    tensorflow_aliases = aliases.tensorflow_aliases(tree)
    tokens = positions.tokens_of(source)
    # TF1's idioms, then NumPy's removed names; edits: (start (row, col), end (row, col), text)
    edits, changes = (a + b for a, b in zip(idioms.rewrites(tree, lines), numpy_names.rewrites(tree, lines)))
    names = _tensorflow_names(source, tree, lines, tokens, tensorflow_aliases)
    tf1_program = tf1_tree or _is_tf1_program([name for name, _, _ in names], tensorflow_aliases)
    for statement in aliases.estimator_imports(tree, lines):
        edit, change = _estimator_import(statement, tf1_program)
        edits.extend([edit] if edit else [])
        changes.append(change)
    unconverted = set()  # the local names whose uses were left for the owner (ERROR)
    for name, first, last in names:
        name_edits, name_changes, new_name = _rewrite_name(tokens, first, last, name, tensorflow_aliases,
                                                           tf1_program)
        edits.extend(name_edits)
        changes.extend(name_changes)
        if any(change.refused for change in name_changes):
            unconverted.add(name.split(".")[0])
        if KERAS_LR.search(new_name) and last + 1 < len(tokens) and tokens[last + 1].string == "(":
            for k in _keyword_lr(tokens, last + 1):
                edits.append((tokens[k].start, tokens[k].end, "learning_rate"))
                changes.append(Change(tokens[k].start[0], tokens[k].start[1], f"renamed {new_name}(lr=) to "
                                      "learning_rate="))
    changes.extend(libraries.estimator_library_imports(tree, tree_packages))
    for statement in aliases.gone_imports(tree, lines):
        edit, change = _gone_import(statement, lines, unconverted)
        edits.extend([edit] if edit else [])
        changes.append(change)
    new_source = positions.apply_edits(source, edits)
    modules = _modules_for([text for _, _, text in edits] + _tf_slim_mends(tree))
    if not _binds_tf(tree) and any(text.lstrip("@(-").startswith("tf.") for _, _, text in edits):
        modules.append("tensorflow as tf")  # (a file that imported only TensorFlow's internal modules)
    new_source, imports = _add_imports(new_source, modules)
    return new_source, sorted(imports + changes, key=lambda c: (c.line, c.column))


def _binds_tf(tree):
    """Whether the file's imports bind the name `tf` (the name the upgrade writes TensorFlow's names under)."""
    return any((alias.asname or alias.name.split(".")[0]) == "tf" for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names)


def _tf_slim_mends(tree):
    """["common.contrib.slim"] for a file that imports tf_slim itself (TF 2's slim programs): that import mends
    tf_slim for TensorFlow 2.21 inside model_fn; else []."""
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
        if any(name == "tf_slim" or name.startswith("tf_slim.") for name in names):
            return ["common.contrib.slim"]
    return []


def _modules_for(new_texts):
    """The imports the new texts need: common, and the submodules that
    `import common` does not bring (common.hooks, common.tf1.*): for each
    name of this project in them, the longest dotted prefix that is a module."""
    needed = []
    code = [line.split("#", 1)[0] for text in new_texts for line in text.splitlines()]  # (not a comment's words)
    for name in (found for line in code for found in _PROJECT_NAME.findall(line)):
        parts = name.split(".")
        if "common" not in needed:
            needed.append("common")
        module = next(".".join(parts[:n]) for n in range(len(parts), 0, -1) if _is_module(".".join(parts[:n])))
        if module not in needed:
            needed.append(module)
    return sorted(needed)


_PROJECT_NAME = re.compile(r"(?<![\w.])common(?:\.\w+)*")  # (a decorator's too: "@common.x")


@functools.lru_cache(maxsize=None)
def _is_module(dotted):
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):  # a parent that is not a package
        return False


def _add_imports(source, modules):
    """Adds `import <module>` for each module not imported yet, before the first top-level statement that
    imports TensorFlow (common sets TensorFlow's kernel options) or uses a name the upgrade wrote (a program
    may read MNIST before it imports TensorFlow), else after the docstring and `from __future__` imports."""
    wanted = [m for m in modules if not re.search(rf"^import {re.escape(m)}\s*$", source, re.M)]
    if not wanted:
        return source, []
    newline = "\r\n" if source.split("\n", 1)[0].endswith("\r") else "\n"  # a CRLF file stays CRLF
    block = "".join(f"import {module}{newline}" for module in wanted)
    at = _after_docstring_and_future(source)
    first = next((node for node in ast.parse(source).body if _imports_tensorflow_or_uses_common(node)), None)
    if first is not None:
        row = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", ())])
        at = max(at, positions.offset_of(source)((row, 0)))
    line = source.count("\n", 0, at) + 1
    return source[:at] + block + source[at:], [Change(line, 0, f"added import {module}") for module in wanted]


def _imports_tensorflow_or_uses_common(statement):
    for node in ast.walk(statement):
        imported = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        if isinstance(node, ast.Name) and node.id == "common" or any(m.split(".")[0] == "tensorflow" for m in imported):
            return True
    return False


def _after_docstring_and_future(source):
    """The offset after a module docstring and `from __future__` imports."""
    offset = positions.offset_of(source)

    def end_of_line(position):
        newline = source.find("\n", offset(position))
        return len(source) if newline < 0 else newline + 1

    at = 0
    for token in positions.tokens_of(source):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
            continue
        if token.type == tokenize.STRING and at == 0:
            at = end_of_line(token.end)
            continue
        if token.string == "from" and source[offset(token.start):].startswith("from __future__"):
            at = end_of_line(token.start)
            continue
        break
    return at
