"""Tests of common.tpu."""
