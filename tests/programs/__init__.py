"""Estimator programs written as their owners wrote them for tf.estimator (TF 2.x era, and TF1 ones).

They are not imported by the tests as they are: `upgraded` runs each through
the rules of `python -m common.upgrade` first, and the tests train the
result. The same files, unchanged, ran on TensorFlow 2.15 with
tensorflow-estimator to record the reference numbers the tests hold
(tests/data/tf215_reference.json).
"""

import importlib.util
import os

from common.upgrade import rules as upgrade_rules

HERE = os.path.dirname(os.path.abspath(__file__))


def upgraded(name, folder):
    """The program `name`, upgraded (nothing refused, nothing edited by hand) into `folder`, imported."""
    with open(os.path.join(HERE, f"{name}.py")) as f:
        source, changes = upgrade_rules.upgrade_source(f.read())
    refused = [c.message for c in changes if c.refused]
    if refused:
        raise AssertionError(f"the upgrade refused parts of {name}: {refused}")
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"upgraded_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
