"""Which local names a file's imports bind to TensorFlow modules, and where its tf.estimator imports are."""

import ast

from common.upgrade import aliases

SOURCE = '''\
import tensorflow as tf
import tensorflow.compat.v1 as v1
import tensorflow.compat.v2 as tf2
from tensorflow.compat import v1 as compat_v1
from tensorflow import keras
import tensorflow_probability as tfp
from tensorflow.python.estimator.model_fn import ModeKeys as Modes, EstimatorSpec
x = "é"; from tensorflow_estimator.python.estimator.estimator import Estimator
from tensorflow.python.estimator import model_fn as model_fn_lib, export
'''


def test_aliases_map_local_names_to_canonical_module_names():
    found = aliases.tensorflow_aliases(ast.parse(SOURCE))
    assert found == {"tf": "tf", "v1": "tf.compat.v1", "tf2": "tf", "compat_v1": "tf.compat.v1",
                     "keras": "tf.keras", "model_fn_lib": "tf.estimator", "export": "tf.estimator.export"}
    # (not tfp, not the estimator's names; tf.estimator's implementation modules stand for what they published)


def test_estimator_imports_are_found_with_tokenizes_positions():
    statements = aliases.estimator_imports(ast.parse(SOURCE), SOURCE.splitlines())
    assert [(s.start, s.names) for s in statements] == [
        ((7, 0), [("ModeKeys", "Modes"), ("EstimatorSpec", "EstimatorSpec")]),
        ((8, 9), [("Estimator", "Estimator")])]  # column in characters ("é" is two bytes)


def test_import_lines():
    source = "a = 1\nfrom x import (\n    y)\nimport os\n"
    assert aliases.import_lines(ast.parse(source)) == {2, 3, 4}
