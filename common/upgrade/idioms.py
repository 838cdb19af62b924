"""TF1 idioms the upgrade finds by the file's syntax tree, not by a name.

A TF1 program calls methods TF2 objects lack, on receivers of any name:
`<dataset>.make_one_shot_iterator()` (TF2 kept the function), and
`<tensor>.shape[i].value` / `.get_shape()[i].value` / `.shape.dims[i].value`
(TF1's Dimension; a TF2 shape's entries are already ints or None), and
TensorFlow 1.3's `<dataset>.map(f, num_threads=n, output_buffer_size=m)`
(`num_parallel_calls=n` then `.prefetch(m)` since 1.4). And it
imports Keras from `tensorflow.python.keras`, TensorFlow's internal copy of
Keras 2, which TensorFlow 2.21 still has but whose layers, models and
optimizers do not mix with the Keras 3 that tf.keras is: those imports read
from `tensorflow.keras`. Each is rewritten in place, and each rewrite is a
`Change`.
"""

import ast
import dataclasses

from common.upgrade.positions import position


@dataclasses.dataclass(frozen=True)
class Change:
    """One line of the upgrade's report: a rewrite, or (refused) a construct left for the owner."""

    line: int
    column: int
    message: str
    refused: bool = False
    end_line: int = 0  # the last row the rewrite touches, where it spans several

    @property
    def rows(self):
        return range(self.line, max(self.line, self.end_line) + 1)

    def describe(self, path):
        return f"{path}:{self.line}:{self.column + 1}: {'ERROR: ' if self.refused else ''}{self.message}"


def method_calls(tree, lines, method):
    """((receiver start), (receiver end), (call end)) of each `<receiver>.<method>()` call with no arguments."""
    return [(position(lines, node.func.value.lineno, node.func.value.col_offset),
             position(lines, node.func.value.end_lineno, node.func.value.end_col_offset),
             position(lines, node.end_lineno, node.end_col_offset))
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
            and not node.args and not node.keywords]


def _is_shape(node):
    """`x.shape`, `x.get_shape()`, `x.shape.dims`, `x.get_shape().dims`."""
    if isinstance(node, ast.Attribute) and node.attr == "dims":
        node = node.value
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node = node.func
        return isinstance(node, ast.Attribute) and node.attr == "get_shape"
    return isinstance(node, ast.Attribute) and node.attr == "shape"


def dimension_values(tree, lines):
    """((subscript end), (attribute end)) of each `<shape>[i].value`: the span of ".value" to drop."""
    return [(position(lines, node.value.end_lineno, node.value.end_col_offset),
             position(lines, node.end_lineno, node.end_col_offset))
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.value, ast.Subscript)
            and not isinstance(node.value.slice, ast.Slice) and _is_shape(node.value.value)]


INTERNAL_KERAS = "tensorflow.python.keras"


def as_imported(canonical):
    """A name read through an import of tensorflow.python.keras as the upgraded import gives it (tf.keras's)."""
    internal = "tf" + INTERNAL_KERAS[len("tensorflow"):] + "."
    return "tf.keras." + canonical[len(internal):] if canonical.startswith(internal) else canonical


def internal_keras_imports(tree, lines):
    """((start), (end)) of the module path in each import of tensorflow.python.keras (or a module under it)."""
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names if alias.asname]  # a bare `import a.b.c` binds `a`
        else:
            continue
        for module in modules:
            if module != INTERNAL_KERAS and not module.startswith(INTERNAL_KERAS + "."):
                continue
            column = lines[node.lineno - 1].find(INTERNAL_KERAS, position(lines, node.lineno, node.col_offset)[1])
            if column >= 0:  # (a str's index: tokenize's column)
                spans.append(((node.lineno, column), (node.lineno, column + len(INTERNAL_KERAS))))
    return spans


def _span(lines, node):
    return (position(lines, node.lineno, node.col_offset), position(lines, node.end_lineno, node.end_col_offset))


def old_map_arguments(tree, lines):
    """Edits and changes for each `.map(..., num_threads=, output_buffer_size=)` call (TensorFlow 1.3's)."""
    edits, changes = [], []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "map"):
            continue
        keywords = {k.arg: k for k in node.keywords}
        threads, buffer = keywords.get("num_threads"), keywords.get("output_buffer_size")
        if threads is None and buffer is None:
            continue
        start = position(lines, node.lineno, node.col_offset)
        if threads is not None:
            name_start = _span(lines, threads)[0]
            edits.append((name_start, (name_start[0], name_start[1] + len("num_threads")), "num_parallel_calls"))
        if buffer is not None:
            arguments = sorted(node.args + node.keywords, key=lambda n: (n.lineno, n.col_offset))
            index = arguments.index(buffer)
            if index:  # from the end of the argument before it: its comma goes too
                edits.append((_span(lines, arguments[index - 1])[1], _span(lines, buffer)[1], ""))
            else:
                edits.append((_span(lines, buffer)[0], _span(lines, arguments[1])[0], ""))
            call_end = _span(lines, node)[1]
            edits.append((call_end, call_end, f".prefetch({ast.unparse(buffer.value)})"))
        changes.append(Change(start[0], start[1], "rewrote TensorFlow 1.3's map(num_threads=, output_buffer_size=) "
                              "as map(num_parallel_calls=).prefetch()", end_line=node.end_lineno))
    return edits, changes


# TF1's queue-runner input (and the other ops that refuse eager execution) by the last part of their names
QUEUE_INPUT = ("string_input_producer", "input_producer", "slice_input_producer", "range_input_producer",
               "TextLineReader", "TFRecordReader", "WholeFileReader", "FixedLengthRecordReader", "IdentityReader",
               "LMDBReader", "shuffle_batch", "batch_join", "shuffle_batch_join", "maybe_batch", "maybe_shuffle_batch",
               "maybe_batch_join", "maybe_shuffle_batch_join", "parallel_stack")
GRAPH_INPUT_MARK = "common.adapters.graph_input.input_fn_in_graph"


def _own_nodes(function):
    """The nodes of a function's body, not those of the functions, lambdas and classes defined in it."""
    pending = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _builds_queue_input(node):
    """Whether a called function is one of TF1's queue-runner input ops (a program's own `opts.shuffle_batch`
    flag, read but not called, is not)."""
    if isinstance(node, ast.Attribute):
        return node.attr in QUEUE_INPUT or node.attr == "batch" and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "train"  # (tf.train.batch, not a Dataset's batch)
    return isinstance(node, ast.Name) and node.id in QUEUE_INPUT


def queue_input_functions(tree, lines):
    """The `def` position of each function whose own body builds TF1 queue-runner input and is not marked yet."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        marked = any(ast.unparse(d).endswith("input_fn_in_graph") for d in node.decorator_list)
        if not marked and any(isinstance(n, ast.Call) and _builds_queue_input(n.func) for n in _own_nodes(node)):
            found.append(position(lines, node.lineno, node.col_offset))
    return found


def rewrites(tree, lines):
    """(edits, changes): each edit is ((row, col) start, (row, col) end, new text), as tokenize counts."""
    edits, changes = [], []
    for receiver_start, receiver_end, call_end in method_calls(tree, lines, "make_one_shot_iterator"):
        edits.append((receiver_start, receiver_start, "common.adapters.tensor_inputs.make_one_shot_iterator("))
        edits.append((receiver_end, call_end, ")"))
        changes.append(Change(receiver_start[0], receiver_start[1], "rewrote <dataset>.make_one_shot_iterator() as "
                              "common.adapters.tensor_inputs.make_one_shot_iterator(<dataset>)",
                              end_line=call_end[0]))
    for subscript_end, end in dimension_values(tree, lines):
        edits.append((subscript_end, end, ""))
        changes.append(Change(subscript_end[0], subscript_end[1], "dropped .value after a shape's entry (TF2's "
                              "shapes hold ints or None, not TF1's Dimension)"))
    map_edits, map_changes = old_map_arguments(tree, lines)
    edits.extend(map_edits)
    changes.extend(map_changes)
    for start in queue_input_functions(tree, lines):
        row = lines[start[0] - 1]
        newline = "\r\n" if row.endswith("\r\n") else "\n"
        edits.append((start, start, f"@{GRAPH_INPUT_MARK}{newline}{row[:start[1]]}"))
        changes.append(Change(start[0], start[1], f"marked a function that builds queue-runner input with "
                              f"@{GRAPH_INPUT_MARK}: the Estimator builds it in a TF1 graph, and called by the "
                              "program it gives its first batch, as TF1 let a program look at one"))
    for start, end in internal_keras_imports(tree, lines):
        edits.append((start, end, "tensorflow.keras"))
        changes.append(Change(start[0], start[1], "import from tensorflow.keras, not tensorflow.python.keras "
                              "(TensorFlow's internal Keras 2, whose objects do not mix with tf.keras's Keras 3)"))
    return edits, changes
