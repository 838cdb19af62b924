"""Kaggle dogs vs. cats: JPEG folders, a small CNN or keras.applications backbone, submission.csv."""
