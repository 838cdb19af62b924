"""Kaggle dogs vs. cats: JPEG folders, a small CNN or keras.applications backbone, submission.csv."""

from common.jobs import process

process.prepare_tensorflow()  # (before anything imports TensorFlow)
