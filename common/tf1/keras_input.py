"""tf.keras.Input(tensor=...) inside model_fn, which Keras 3 refuses.

Keras 2 let a model_fn start a chain of Keras layers from a tensor it had
(`net = tf.keras.layers.Input(tensor=embeddings)`, as the TPU recommenders
did): what it returned stood for that tensor, and layers called on it gave
tensors. Keras 3's Input takes only its own symbolic tensors, and raises
"Argument `input_tensor` must be a KerasTensor" on a graph tensor. Given a
tensor, Input here is that tensor, which Keras 3's layers take as they are;
without one, it is Keras's own Input.
"""

import keras
import tensorflow as tf


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None,  # noqa: N802 (Keras)
          tensor=None, **kwargs):
    """tf.keras.Input (and tf.keras.layers.Input).

    Args:
      shape, batch_size, dtype, sparse, batch_shape, name, **kwargs: Keras's Input's, used when no tensor is given.
      tensor: a tensor (a model_fn's features or what it made of them) to start a chain of layers from.

    Returns:
      `tensor` itself when given (Keras 3's layers take it as it is), else Keras's symbolic input.

    Raises:
      ValueError: a tensor given with a shape that its own static shape contradicts (as Keras 2 checked).
    """
    if tensor is None:
        return keras.Input(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, batch_shape=batch_shape,
                           name=name, **kwargs)
    tensor = tf.convert_to_tensor(tensor)
    if shape is not None and not tf.TensorShape([None] + list(shape)).is_compatible_with(tensor.shape):
        raise ValueError(f"Input(shape={tuple(shape)}, tensor=...): the tensor's shape is {tensor.shape}")
    return tensor
