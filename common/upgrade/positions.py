"""Where things are in a source text, counted as Python's tokenizer counts them.

A row ends at "\n" only (CRLF's "\r" stays on its row). `str.splitlines` also
breaks at form feeds, "\x1c"-"\x1e", "\x85", U+2028 and U+2029, which Python
reads as ordinary characters: counting rows with it put every edit after such
a character in the wrong place.
"""

import io
import tokenize


def source_lines(source):
    """The source's rows, each with its "\n" (the last one may lack it)."""
    rows = source.split("\n")
    return [row + "\n" for row in rows[:-1]] + ([rows[-1]] if rows[-1] else [])


def tokens_of(source):
    """tokenize's tokens of the source, read row by row as source_lines splits it."""
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def position(lines, lineno, byte_col):
    """tokenize's (row, col) of an ast position (ast counts a line's UTF-8 bytes, tokenize its characters)."""
    return lineno, len(lines[lineno - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore"))


def offset_of(source):
    """A function: (row, col) as tokenize counts them -> the offset in `source`."""
    starts = [0]
    for line in source_lines(source):
        starts.append(starts[-1] + len(line))
    return lambda point: starts[point[0] - 1] + point[1]


def apply_edits(source, edits):
    """The source with each edit ((row, col) start, (row, col) end, replacement text) made."""
    offset = offset_of(source)
    text = source
    for start, end, replacement in sorted(edits, key=lambda e: (offset(e[0]), offset(e[1])), reverse=True):
        text = text[:offset(start)] + replacement + text[offset(end):]
    return text
