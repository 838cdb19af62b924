"""common.upgrade.numpy_names: NumPy spellings removed since TF1's day rewritten through the file's alias."""

import textwrap

import numpy as np

from common.upgrade import rules


def upgrade(source):
    return rules.upgrade_source(textwrap.dedent(source))


def test_removed_aliases_become_python_types_and_numpy_2s_names_through_the_alias_used():
    new, changes = upgrade('''\
        import numpy as np
        import numpy

        target = np.zeros(3, dtype=np.int) + np.float(1) + np.product([2, 3])
        missing = numpy.NaN if np.bool else -numpy.Inf
        floor = np.NINF ** 2
        kept = (np.int32, np.float64, np.bool_, np.long)
        ''')
    assert new == textwrap.dedent('''\
        import numpy as np
        import numpy

        target = np.zeros(3, dtype=int) + float(1) + np.prod([2, 3])
        missing = numpy.nan if bool else -numpy.inf
        floor = (-np.inf) ** 2
        kept = (np.int32, np.float64, np.bool_, int)
        ''')
    assert [c.message for c in changes] == [
        "rewrote np.int as int (NumPy 1.24 removed its aliases of Python's types)",
        "rewrote np.float as float (NumPy 1.24 removed its aliases of Python's types)",
        "rewrote np.product as np.prod (NumPy 2.0 removed the name)",
        "rewrote numpy.NaN as numpy.nan (NumPy 2.0 removed the name)",
        "rewrote np.bool as bool (NumPy 1.24 removed its aliases of Python's types)",
        "rewrote numpy.Inf as numpy.inf (NumPy 2.0 removed the name)",
        "rewrote np.NINF as (-np.inf) (NumPy 2.0 removed the name)",
        "rewrote np.long as int (NumPy 1.24 removed its aliases of Python's types)"]
    scope = {}
    exec(new, scope)  # the installed NumPy runs what came out
    assert scope["target"].tolist() == [7.0, 7.0, 7.0] and scope["floor"] == np.inf


def test_only_names_reached_through_an_import_of_numpy_are_touched():
    source = '''\
        import numpy.random as np
        import tensorflow as tf


        class Spec:
            int = 3


        spec = Spec()
        seed = spec.int + tf.int32.size
        '''
    new, changes = upgrade(source)
    assert new == textwrap.dedent(source) and not changes


def test_np_sum_of_a_generator_becomes_pythons_sum_as_numpy_1_summed_it():
    new, changes = upgrade('''\
        import numpy as np

        matrix = np.arange(9.0).reshape(3, 3)
        column = np.sum(matrix[r][1] for r in range(3))
        kept = np.sum([matrix[r][1] for r in range(3)]) + np.sum((v for v in range(3)), axis=0)
        ''')
    assert "column = sum(matrix[r][1] for r in range(3))" in new
    assert "kept = np.sum([matrix[r][1] for r in range(3)]) + np.sum((v for v in range(3)), axis=0)" in new
    assert [c.message for c in changes] == [
        "rewrote np.sum(generator) as sum(generator) (NumPy 1 summed a generator with Python's sum; NumPy 2 "
        "refuses it)"]
    scope = {}
    exec(new.replace(" + np.sum((v for v in range(3)), axis=0)", ""), scope)  # (NumPy 2 refuses the one kept)
    assert scope["column"] == 12.0
