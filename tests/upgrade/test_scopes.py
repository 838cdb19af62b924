"""A parameter or local called like a TensorFlow alias is the local, not TensorFlow: left alone."""

import ast

from common.upgrade import aliases, rules, scopes

PROGRAM = '''import tensorflow as tf


def f(tf, mode=tf.estimator.ModeKeys.TRAIN):
    return tf.estimator.Estimator


def g():
    for tf in range(3):
        print(tf.estimator)

    def h():
        return tf.estimator.Estimator
    return h


def k():
    global tf
    import tensorflow as tf
    return tf.estimator.Estimator


lam = lambda tf: tf.estimator
est = tf.estimator.Estimator
'''


def test_shadowed_uses_are_the_functions_own_bindings():
    tree = ast.parse(PROGRAM)
    found = scopes.shadowed_uses(tree, {"tf"}, aliases.tensorflow_imports(tree))
    assert sorted(found) == [(5, 11), (9, 8), (10, 14), (13, 15), (23, 17)]


def test_the_upgrade_rewrites_only_tensorflows_uses():
    new, changes = rules.upgrade_source(PROGRAM)
    assert "def f(tf, mode=common.ModeKeys.TRAIN):\n    return tf.estimator.Estimator\n" in new
    assert "        print(tf.estimator)\n" in new and "        return tf.estimator.Estimator\n" in new
    assert "    import tensorflow as tf\n    return common.Estimator\n" in new
    assert "lam = lambda tf: tf.estimator\nest = common.Estimator\n" in new
    assert [c.line for c in changes if c.message.startswith("renamed")] == [4, 20, 24]
