"""SavedModel export: `receivers` (what a signature takes), `saved_model`
(the signatures and the atomic write), `exporters` (what train_and_evaluate
exports after an evaluation: Latest, Best, Final)."""
