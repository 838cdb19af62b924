"""Who owns the model's variables, so that every call of model_fn shares them.

`registry` (the modules of common.get_module, the optimizer, the global
step, and the rules on variable creation), `served` (variables model_fn
builds itself, served by name to every later call), `keras_internals` (the
one place Keras's private state is read).
"""
