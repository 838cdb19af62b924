"""The TF 2.15 reference runs (tf215_reference.json) on this project's side: the cases' estimators made with
common.canned, and their initial weights written as a TF1-named checkpoint to warm-start from."""

import json
import os

import keras
import numpy as np
import tensorflow as tf

from common import canned
from common.canned import v1
from common.tf1 import feature_column as tf1_feature_column
from tests.canned import reference_data
from tests.canned.reference_data import (  # noqa: F401 (the tests' data)
    ALL_FEATURES, FEATURES, LABELS3, TARGETS, columns, tpu_embedding_columns)

CASES = json.load(open(os.path.join(os.path.dirname(__file__), "tf215_reference.json")))["cases"]
FLAVOUR = reference_data.Flavour(canned, v1, keras.optimizers.Adam, tf1_feature_column.shared_embedding_columns)


def estimator(case, **kwargs):
    """(estimator, features, labels) of a reference case, as common.canned makes it."""
    return reference_data.estimator(case, FLAVOUR, **kwargs)


def write_initial_checkpoint(case, path):
    """The case's step-0 weights from TF 2.15, saved under their names as tf.estimator's Saver wrote them."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.Graph().as_default():
        variables = [tf.compat.v1.Variable(np.array(value, np.float32), name=name)
                     for name, value in CASES[case]["initial"].items()]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.variables_initializer(variables))
            return tf.compat.v1.train.Saver(variables).save(session, path)


def train_input(features, labels, batch=8):
    return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch).repeat()


def eval_input(features, labels, batch=8):
    return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch)


def predict_input(features, batch=8):
    return lambda: tf.data.Dataset.from_tensor_slices(features).batch(batch)
