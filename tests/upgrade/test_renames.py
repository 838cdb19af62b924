"""The upgrade's tables: every counterpart they name exists in this project or in TensorFlow."""

import importlib
import importlib.util

from common.upgrade import renames, rules, tf_names

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


def test_the_rnn_estimators_are_refused_with_what_to_write_instead():
    source = "import tensorflow as tf\nrnn = tf.estimator.experimental.RNNClassifier(columns, cell_type='lstm')\n"
    _, changes = rules.upgrade_source(source)
    errors = [c.message for c in changes if c.refused]
    assert len(errors) == 1 and "common.layers.SequenceFeatures" in errors[0]


def test_the_in_memory_evaluator_hook_maps_to_the_projects():
    source = ("import tensorflow as tf\nhook = tf.estimator.experimental.InMemoryEvaluatorHook(est, input_fn)\n"
              "old = tf.contrib.estimator.InMemoryEvaluatorHook(est, input_fn)\n")
    new, changes = rules.upgrade_source(source)
    assert not [c for c in changes if c.refused]
    assert new.count("common.training.in_memory_evaluator.InMemoryEvaluatorHook(est, input_fn)") == 2


def test_contribs_replicate_model_fn_and_tower_optimizer_map_to_the_projects_towers():
    source = ("import tensorflow as tf\nopt = tf.contrib.estimator.TowerOptimizer(opt)\n"
              "est = tf.estimator.Estimator(tf.contrib.estimator.replicate_model_fn(model_fn), model_dir)\n")
    new, changes = rules.upgrade_source(source)
    assert not [c for c in changes if c.refused]
    assert "common.contrib.replicate.TowerOptimizer(opt)" in new
    assert "common.Estimator(common.contrib.replicate.replicate_model_fn(model_fn), model_dir)" in new
