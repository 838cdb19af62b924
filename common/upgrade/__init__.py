"""`python -m common.upgrade`: rewrites a tf.estimator program to run on this
project. `rules` (what changes in one source text), `cli` (files, trees and
the report)."""
