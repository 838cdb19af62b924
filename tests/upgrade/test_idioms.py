"""The upgrade's syntax-tree rewrites: TF1 methods on receivers of any name."""

import ast

from common.upgrade import idioms, rules


def _rewritten(source):
    edits, changes = idioms.rewrites(ast.parse(source), source.splitlines())
    lines = source.splitlines()
    for (row, start), (end_row, end), text in sorted(edits, reverse=True):
        assert row == end_row
        lines[row - 1] = lines[row - 1][:start] + text + lines[row - 1][end:]
    return "\n".join(lines), changes


def test_method_calls_find_receivers_of_calls_without_arguments():
    source = "a = ds.map(f).make_one_shot_iterator()\nb = it.make_one_shot_iterator(1)\n"
    assert idioms.method_calls(ast.parse(source), source.splitlines(), "make_one_shot_iterator") == [
        ((1, 4), (1, 13), (1, 38))]


def test_one_shot_iterator_method_becomes_the_function():
    new, changes = _rewritten("it = ds.batch(2).make_one_shot_iterator()\n")
    assert new == "it = common.adapters.tensor_inputs.make_one_shot_iterator(ds.batch(2))"
    assert [c.line for c in changes] == [1]


def test_a_shapes_dimension_value_is_dropped_and_nothing_else():
    source = ("h = out.shape[-1].value\n"
              "w = x.get_shape()[1].value + y.shape.dims[0].value\n"
              "kept = [a.shape[1:].value, d[0].value, x.shape.value, é.shape[0]]\n")
    new, changes = _rewritten(source)
    assert new.splitlines() == ["h = out.shape[-1]", "w = x.get_shape()[1] + y.shape.dims[0]",
                                "kept = [a.shape[1:].value, d[0].value, x.shape.value, é.shape[0]]"]
    assert [(c.line, c.column) for c in changes] == [(1, 17), (2, 20), (2, 44)]
    assert all("Dimension" in c.message and not c.refused for c in changes)


def test_tensorflow_1_3s_map_arguments_become_parallel_calls_and_a_prefetch():
    source = ("ds = ds.map(self.parser, num_threads=batch_size, output_buffer_size=2 * batch_size)\n"
              "b = d.map(f, output_buffer_size=8)\n"
              "c = d.map(f, num_parallel_calls=4)\n")
    new, changes = _rewritten(source)
    assert new.splitlines() == ["ds = ds.map(self.parser, num_parallel_calls=batch_size).prefetch(2 * batch_size)",
                                "b = d.map(f).prefetch(8)", "c = d.map(f, num_parallel_calls=4)"]
    assert [c.line for c in changes] == [1, 2]


def test_imports_of_tensorflows_internal_keras_read_tf_keras():
    source = ("from tensorflow.python.keras import models\n"
              "import tensorflow.python.keras.layers as kl\n"
              "import tensorflow.python.keras\n"
              "from tensorflow.python.keras_x import y\n")
    new, _ = _rewritten(source)
    assert new.splitlines() == ["from tensorflow.keras import models", "import tensorflow.keras.layers as kl",
                                "import tensorflow.python.keras", "from tensorflow.python.keras_x import y"]


def test_names_read_through_an_internal_keras_import_are_checked_where_the_upgraded_import_finds_them():
    source = ("import tensorflow as tf\nfrom tensorflow.python.keras.datasets import imdb\n"
              "from tensorflow.python.keras.preprocessing import sequence\n"
              "(x, y), _ = imdb.load_data(num_words=100)\nx = sequence.pad_sequences(x, maxlen=10)\n")
    new, changes = rules.upgrade_source(source)
    assert not [c for c in changes if c.refused]
    assert "from tensorflow.keras.datasets import imdb\n" in new
