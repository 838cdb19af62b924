"""The contract between model_fn and the framework.

`model_fn` (ModeKeys, EstimatorSpec, how model_fn and input_fn are called),
`metrics` (streaming eval metrics a spec returns), `export_outputs` (what an
exported signature serves). Types only: what runs them is in common.engine.
"""
