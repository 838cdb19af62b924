"""Properties of the upgrade on real and generated programs: the output is Python, it differs from the input
only on the rows the report names (every other row byte for byte, imports and queue-input marks added), and a
second run changes nothing. Real: the programs of tests/programs and, where the checkout has it beside it, the
conformance corpus (../shared/conformance: TensorFlow's docs, TFP, BERT, the Cloud ML census sample)."""

import ast
import difflib
import glob
import os
import random
import tokenize

import pytest

from common.upgrade import idioms, positions, rules
from tests import ROOT

CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "conformance", "programs")
REAL = sorted(glob.glob(os.path.join(ROOT, "tests", "programs", "*.py"))
              + glob.glob(os.path.join(CORPUS, "**", "*.py"), recursive=True))

STATEMENTS = [  # each a top-level statement a program of the field might hold
    "est = tf.estimator.Estimator(model_fn, model_dir=d)",
    "opt = tf.compat.v1.train.AdamOptimizer(0.1)",
    "w = tf.compat.v1.get_variable('w', [2], initializer=tf.compat.v1.zeros_initializer())",
    "spec = tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)",
    "y = tf.nn.relu(x)  # unchanged: TF2's own",
    "s = 'caf\u00e9\u2028\u2029\x1c\x1d\x1e\x85'  # n\u00e4me",
    "\x0c",
    "def f(tf):\n    return tf.estimator.Estimator",
    "def g(x):\n\treturn x.shape[1].value",
    "it = dataset.make_one_shot_iterator()",
    "hooks = [tf.estimator.LoggingTensorHook({'loss': loss}, every_n_iter=10)]",
    "keras = tf.keras.optimizers.SGD(lr=0.1)",
    "text = '''tf.estimator.Estimator in a string\nstays'''",
    "if mode == tf.estimator.ModeKeys.TRAIN:\n    pass  # tf.estimator in a comment",
]


def _generated(seed):
    """A program of random statements, with random line endings, BOM and blank or form-feed rows."""
    pick = random.Random(seed)
    body = [pick.choice(STATEMENTS) for _ in range(pick.randint(3, 12))]
    text = "\n".join(["import tensorflow as tf", *body, ""])
    if pick.random() < 0.5:
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if pick.random() < 0.3 else "") + text


def _rows_of(tokens):
    return [token.start[0] for token in tokens]


def _assert_properties(source):
    text = source.lstrip("\ufeff")
    new, changes = rules.upgrade_source(text)
    ast.parse(new)
    changed = {row for change in changes for row in change.rows}
    in_lines, out_lines = positions.source_lines(text), positions.source_lines(new)
    added = {i for i, line in enumerate(out_lines) if (line.rstrip().startswith("import common")
             or line.strip() == "@" + idioms.GRAPH_INPUT_MARK) and line not in in_lines}  # (imports, marks)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, in_lines, out_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        assert {row + 1 for row in range(i1, i2)} <= changed, (tag, in_lines[i1:i2], out_lines[j1:j2])
        if tag == "insert":
            assert set(range(j1, j2)) <= added, out_lines[j1:j2]
    in_tokens, out_tokens = positions.tokens_of(text), positions.tokens_of(new)
    import_rows = {i + 1 for i in added}
    matcher = difflib.SequenceMatcher(None, [(t.type, t.string) for t in in_tokens],
                                      [(t.type, t.string) for t in out_tokens], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        rows = set(_rows_of(in_tokens[i1:i2])) or {in_tokens[min(i1, len(in_tokens) - 1)].start[0]}
        inserted_imports = {t.start[0] for t in out_tokens[j1:j2]
                            if t.type not in (tokenize.NL, tokenize.NEWLINE)} <= import_rows
        assert rows <= changed or (tag == "insert" and inserted_imports), \
            (tag, [t.string for t in in_tokens[i1:i2]], [t.string for t in out_tokens[j1:j2]])
    again, _ = rules.upgrade_source(new)
    assert again == new, "a second run changed the output"
    return changes


@pytest.mark.parametrize("path", REAL, ids=lambda p: os.path.relpath(p, os.path.dirname(ROOT)))
def test_real_programs(path):
    with tokenize.open(path) as f:
        _assert_properties(f.read())


def test_generated_programs():
    rewritten = 0
    for seed in range(60):
        rewritten += len(_assert_properties(_generated(seed)))
    assert rewritten > 100  # the generator does reach the rules
