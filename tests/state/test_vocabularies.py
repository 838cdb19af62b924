"""Vocabulary files fingerprinted in the model dir: a file rewritten in another order is refused by train(),
evaluate(), predict() and export, naming it, the model dir untouched; lines appended are allowed with a warning;
the export carries the trained vocabulary as an asset."""

import json
import logging as py_logging
import os

import numpy as np
import pytest
import tensorflow as tf

import common
import common.tf1.train
from common import canned
from common.state import vocabularies

WORDS = ["ham", "spam", "eggs"]


def _write(path, words):
    path.write_text("".join(word + "\n" for word in words))


def _input_fn():
    words = np.array([["ham"], ["spam"], ["eggs"], ["ham"]])
    return tf.data.Dataset.from_tensor_slices(({"w": words}, np.array([1, 0, 0, 1]))).batch(2).repeat()


def _estimator(tmp_path, vocabulary, vocabulary_size=None):
    column = tf.feature_column.categorical_column_with_vocabulary_file("w", str(vocabulary), vocabulary_size)
    return canned.LinearClassifier([column], model_dir=str(tmp_path / "model")), column


def test_a_vocabulary_rewritten_in_another_order_is_refused_by_every_run_that_restores(tmp_path):
    vocabulary = tmp_path / "words.txt"
    _write(vocabulary, WORDS)
    est, column = _estimator(tmp_path, vocabulary)
    est.train(_input_fn, steps=2)
    recorded = json.loads((tmp_path / "model" / vocabularies.FILE).read_text())
    assert recorded == {str(vocabulary): vocabularies.fingerprint(str(vocabulary))}
    assert recorded[str(vocabulary)]["lines"] == 3
    files_before = sorted(os.listdir(tmp_path / "model"))

    _write(vocabulary, list(reversed(WORDS)))
    receiver = common.build_parsing_serving_input_receiver_fn(tf.feature_column.make_parse_example_spec([column]))
    changed = f"the vocabulary file {vocabulary} changed since the model in .* was trained with it \\(3 lines"
    again, _ = _estimator(tmp_path, vocabulary)  # (a new process's Estimator: the file read anew)
    with pytest.raises(ValueError, match=changed):
        again.train(_input_fn, steps=2)
    with pytest.raises(ValueError, match=changed):
        again.evaluate(_input_fn, steps=1)
    with pytest.raises(ValueError, match=changed):
        list(again.predict(lambda: _input_fn().map(lambda features, labels: features).take(1)))
    with pytest.raises(ValueError, match=changed):
        again.export_saved_model(str(tmp_path / "export"), receiver)
    assert sorted(os.listdir(tmp_path / "model")) == files_before and not (tmp_path / "export").exists()

    _write(vocabulary, WORDS)
    restored, _ = _estimator(tmp_path, vocabulary)
    exported = restored.export_saved_model(str(tmp_path / "export"), receiver)
    assert os.listdir(os.path.join(exported, "assets")) == ["words.txt"]  # the trained vocabulary, as tf.estimator


def test_lines_appended_keep_every_trained_id_and_are_allowed_with_a_warning(tmp_path, caplog):
    """With the vocabulary's size fixed (else the weights' shape changes, and the checkpoint is refused as
    another model's)."""
    vocabulary = tmp_path / "words.txt"
    _write(vocabulary, WORDS)
    est, _ = _estimator(tmp_path, vocabulary, vocabulary_size=3)
    est.train(_input_fn, steps=2)
    _write(vocabulary, WORDS + ["toast"])
    resumed, _ = _estimator(tmp_path, vocabulary, vocabulary_size=3)
    with caplog.at_level(py_logging.WARNING, logger="tensorflow"):
        resumed.train(_input_fn, steps=2)
    assert f"Vocabulary file {vocabulary} has 1 lines appended" in caplog.text
    assert "a column of a fixed vocabulary_size reads the new words as out of vocabulary" in caplog.text
    assert resumed.get_variable_value("global_step") == 4
    caplog.clear()
    with caplog.at_level(py_logging.WARNING, logger="tensorflow"):
        resumed.evaluate(_input_fn, steps=1)
    assert "lines appended" not in caplog.text  # (said once a process)
    sized_by_the_file, _ = _estimator(tmp_path, vocabulary)  # its weights grew to 4 rows: the refusal says why
    with pytest.raises(common.CheckpointMismatchError, match=(
            f"does not fit the model: the vocabulary file {vocabulary} has 1 lines appended since the model was "
            r"trained \(3 then, 4 now\): a feature column sized by the file grew with it; give it vocabulary_size=3 "
            r"to go on training this model. \(shapes differ: .*; the model dir is untouched\)")) as refused:
        sized_by_the_file.train(_input_fn, steps=2)
    assert "remove it to start over" not in str(refused.value)


def test_a_lookup_table_model_fn_builds_from_a_file_is_fingerprinted_too(tmp_path):
    vocabulary = tmp_path / "labels.txt"
    _write(vocabulary, ["no", "yes"])

    def model_fn(features, labels, mode):
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(vocabulary), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), default_value=-1)
        ids = tf.cast(table.lookup(labels), tf.float32)
        weight = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features * weight - ids))
        return common.EstimatorSpec(mode, loss=loss, train_op=common.tf1.train.GradientDescentOptimizer(
            0.1).minimize(loss))

    est = common.Estimator(model_fn, str(tmp_path / "model"))
    data = lambda: tf.data.Dataset.from_tensors(([1.0], ["yes"])).repeat()  # noqa: E731
    est.train(data, steps=1)
    _write(vocabulary, ["yes", "no"])
    with pytest.raises(ValueError, match=f"the vocabulary file {vocabulary} changed"):
        common.Estimator(model_fn, str(tmp_path / "model")).train(data, steps=1)


def test_a_file_is_read_again_only_when_its_size_or_time_changed(tmp_path, monkeypatch):
    """A continuous evaluator checks the files at every checkpoint: an unchanged file is hashed once."""
    vocabulary = tmp_path / "words.txt"
    _write(vocabulary, WORDS)
    reads = []
    real = vocabularies.fingerprint
    monkeypatch.setattr(vocabularies, "fingerprint", lambda path, lines=None: reads.append(path) or real(path, lines))
    first = vocabularies.current(str(vocabulary))
    assert vocabularies.current(str(vocabulary)) == first and len(reads) == 1
    _write(vocabulary, list(reversed(WORDS)))  # (same size)
    os.utime(vocabulary, ns=(os.stat(vocabulary).st_atime_ns, os.stat(vocabulary).st_mtime_ns + 1))
    assert vocabularies.current(str(vocabulary))["sha256"] != first["sha256"] and len(reads) == 2
