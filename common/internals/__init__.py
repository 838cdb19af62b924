"""Keras's and TensorFlow's private state that the framework must read or patch, in one place.

The lowest layer: a Keras or TensorFlow release that moves a private name
breaks a module here, not the engine.
"""
