"""How a train(), evaluate() or predict() call runs.

`inputs` (input_fn's dataset, checked), `model_builder` (model_fn called,
its variables built once), `towers` (a batch split over the towers, their
results averaged on a chosen device), `step` (one step over all towers),
`loops` (several compiled steps per call), and the outer loops
`train_loop`, `eval_loop`, `predict_loop` (calls of the compiled loop,
hooks, stopping).
"""
