"""Estimator programs written as their owners wrote them for tf.estimator (TF 2.x era, and a TF1 one).

They are not imported by the tests as they are: tests/test_upgrade_programs.py
runs each through `python -m common.upgrade` first, then trains the result.
The same files, unchanged, ran on TensorFlow 2.15 with tensorflow-estimator
to record the reference numbers the tests hold.
"""
