"""The upgrade's tables: every counterpart they name exists in this project or in TensorFlow."""

import importlib
import importlib.util

from common.upgrade import renames, tf_names

EXTRAS = ("common.contrib.slim",)  # modules for a package the project does not install (tf_slim): importable with it


def _resolves(dotted):
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for part in parts[n:]:
            value = getattr(value, part)
        return value


def test_every_project_counterpart_exists():
    missing = [old for old, new in renames.RENAMES.items()
               if new.startswith("common.") and new not in EXTRAS and _resolves(new) is None]
    assert not missing
    assert all(importlib.util.find_spec(extra) is not None for extra in EXTRAS)


def test_tensorflow_counterparts_exist_and_flavours_are_kept():
    for old, new in renames.RENAMES.items():
        if new.startswith("tf."):  # (a name, or a call of one: tf.get_logger() for TF1's private logger)
            assert tf_names.exists(new.removesuffix("()")), (old, new)
    assert renames.RENAMES["tf.compat.v1.estimator.DNNClassifier"] == "common.canned.v1.DNNClassifier"
    assert renames.RENAMES["tf.estimator.DNNClassifier"] == "common.canned.DNNClassifier"
    assert renames.RENAMES["tf.compat.v1.estimator.DNNLinearCombinedClassifier"] == \
        "common.canned.v1.DNNLinearCombinedClassifier"  # (TF1 summed the loss: its own flavour)
    assert renames.RENAMES["tf.contrib.layers.layer_norm"] == "common.contrib.layers.layer_norm"
    assert renames.RENAMES["tf.contrib.summary.scalar"] == "common.tf1.summary.scalar"  # (the transformer's)
    assert "tf.contrib." in renames.UNSUPPORTED
