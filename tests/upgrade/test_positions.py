"""Rows and columns as Python's tokenizer counts them, whatever characters str.splitlines breaks at."""

import ast

from common.upgrade import positions


def test_rows_break_at_newlines_only():
    source = "a = 1\r\n\x0cb = 'x\u2028y\x1c\x85'\nc"
    assert positions.source_lines(source) == ["a = 1\r\n", "\x0cb = 'x\u2028y\x1c\x85'\n", "c"]
    assert positions.source_lines("a\n") == ["a\n"]
    assert len(positions.source_lines(source)) == len(ast.parse(source).body)


def test_offsets_and_ast_positions_land_on_the_same_character():
    source = "s = 'é\u2028'; t = 1\n\x0cu = s\n"
    lines = positions.source_lines(source)
    offset = positions.offset_of(source)
    tree = ast.parse(source)
    for node in (tree.body[1].targets[0], tree.body[2].value):  # t, after a 3-byte character; s after \f
        point = positions.position(lines, node.lineno, node.col_offset)
        assert source[offset(point)] == (node.id if isinstance(node, ast.Name) else "?")
    names = [t for t in positions.tokens_of(source) if t.type == 1]
    assert [source[offset(t.start)] for t in names] == ["s", "t", "u", "s"]
