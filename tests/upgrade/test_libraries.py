"""A library built on tf.estimator is named at its import, with the way on, instead of a clean upgrade that then
fails inside the library."""

import ast

from common.upgrade import libraries, rules


def test_each_import_of_an_estimator_library_is_an_error_naming_it():
    source = ("import tensorflow as tf\nimport tensorflow_gan as tfgan\nfrom adanet import Estimator\n"
              "import numpy as np\n")
    found = libraries.estimator_library_imports(ast.parse(source))
    assert [(c.line, c.refused) for c in found] == [(2, True), (3, True)]
    assert "tensorflow_gan is built on tf.estimator (TFGAN's GANEstimator" in found[0].message
    assert "--intree=<tensorflow_gan checkout>" in found[0].message


def test_the_upgrade_reports_them_and_seq2seq_with_its_replacement():
    source = ("import tensorflow as tf\nimport tensorflow_gan as tfgan\n"
              "cell = tf.contrib.seq2seq.AttentionWrapper(cell, mech)\n")
    _, changes = rules.upgrade_source(source)
    errors = [c for c in changes if c.refused]
    assert [c.line for c in errors] == [2, 3]
    assert "keras.layers.AdditiveAttention (Bahdanau)" in errors[1].message


def test_a_librarys_imports_of_itself_are_not_refused_when_its_own_tree_is_upgraded():
    source = "import tensorflow as tf\nfrom tensorflow_gan.python import namedtuples\nimport adanet\n"
    found = libraries.estimator_library_imports(ast.parse(source), tree_packages={"tensorflow_gan", "examples"})
    assert [(c.line, c.message.split(" ")[0]) for c in found] == [(3, "adanet")]

