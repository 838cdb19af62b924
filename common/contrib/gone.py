"""What a name stands for that a program imported from a module TensorFlow 2.21 lacks, where this project has
no counterpart of it.

The upgrade rewrites each use of tf.contrib, tf.estimator and
tensorflow.examples it has a counterpart for; a use it has none for is
reported ERROR. Keeping the import of that module stopped the whole program
there, though the use might sit in a branch the run never takes (one task of
many, a TPU-only path). So the name is bound to a `Gone` instead: reaching
into it gives more of the same, and calling it says what is missing.
"""


class Gone:
    """A stand-in for `name`, a module, class or function TensorFlow 2.21 lacks."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return Gone(f"{self._name}.{attribute}")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"{self._name}: TensorFlow 2.21 has no such thing (tf.contrib left it with 2.0, tf.estimator with 2.16) "
            "and this project has no counterpart of it; python -m common.upgrade marked this use ERROR: replace it")

    def __repr__(self):
        return f"<gone: {self._name}>"
