"""The test suite: one folder per package (tests/<package>/test_<module>.py), shared fixtures here."""

import os

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)  # the project root: where `python -m mnist.main` and the test jobs run
DATA = os.path.join(TESTS, "data")  # files the tests read: references recorded on TF 2.15, test images
