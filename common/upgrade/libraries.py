"""Libraries of others built on tf.estimator, which fail at their own import on TensorFlow 2.16 and later.

A program that imports one (TFGAN's GANEstimator, AdaNet, TF-Ranking's
estimator) upgrades cleanly and then stops inside the library (`ImportError:
cannot import name 'estimator' from 'tensorflow'`). The upgrade says so at
the import, as an ERROR: the library's source is upgraded with the same
command and that copy used, or the library's own TensorFlow 2 API taken.
"""

import ast
from typing import List

from common.upgrade.idioms import Change

# The library's import name -> what it builds on tf.estimator.
ESTIMATOR_LIBRARIES = {
    "tensorflow_gan": "TFGAN's GANEstimator, StarGANEstimator and TPUGANEstimator",
    "adanet": "AdaNet's Estimator and TPUEstimator",
    "tensorflow_ranking": "TF-Ranking's estimator module (tfr.estimator)",
    "tensorflow_lattice": "TensorFlow Lattice's canned estimators (before 2.1)",
}


def estimator_library_imports(tree, tree_packages=()) -> List[Change]:
    """An ERROR Change at each statement of the file that imports a library of ESTIMATOR_LIBRARIES, but one of
    tree_packages (the library's own tree, being upgraded as the message asks)."""
    found = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
        for name in names:
            library = name.split(".")[0]
            if library in ESTIMATOR_LIBRARIES and library not in tree_packages:
                found.append(Change(node.lineno, node.col_offset, (
                    f"{library} is built on tf.estimator ({ESTIMATOR_LIBRARIES[library]}), which TensorFlow 2.16 "
                    f"removed: its import fails there. Upgrade its source with this command too (python -m "
                    f"common.upgrade --intree=<{library} checkout> --outtree=<copy>) and put that copy first on "
                    "PYTHONPATH, or keep this program on TensorFlow 2.15"), refused=True))
    return found
