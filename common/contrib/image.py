"""tf.contrib.image's projective transforms, which left TensorFlow with 2.0.

Augmenting input pipelines rotated and translated images with these. Each
is TF1's function over the kernel TF1 ran (ImageProjectiveTransformV2, still
in tf.raw_ops): a transform is 8 numbers [a0, a1, a2, b0, b1, b2, c0, c1]
mapping an output point (x, y) to the input point ((a0 x + a1 y + a2) / k,
(b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1; points outside the input are 0.
Images are [height, width], [height, width, channels] or [batch, height,
width, channels]; the result has the rank of the images given.
"""

import tensorflow as tf

_IMAGE_DTYPES = (tf.uint8, tf.int32, tf.int64, tf.float16, tf.float32, tf.float64)


def _as_batch(images, function):
    """(images as [batch, height, width, channels], a function giving a result the rank of `images`).

    Raises:
      TypeError: a dtype the kernel does not take, or a rank that is unknown or not 2 to 4 (TF1's checks).
    """
    images = tf.convert_to_tensor(images, name="images")
    if images.dtype.base_dtype not in _IMAGE_DTYPES:
        raise TypeError(f"{function}: invalid dtype {images.dtype.name} of images (one of "
                        f"{', '.join(dtype.name for dtype in _IMAGE_DTYPES)})")
    rank = images.shape.rank
    if rank is None:
        raise TypeError(f"{function}: the rank of images must be statically known")
    if rank not in (2, 3, 4):
        raise TypeError(f"{function}: images should have rank between 2 and 4, got rank {rank}")
    batch = {2: lambda: images[None, :, :, None], 3: lambda: images[None], 4: lambda: images}[rank]()
    back = {2: lambda output: output[0, :, :, 0], 3: lambda output: output[0], 4: lambda output: output}[rank]
    return batch, back


def _rows(values, name, ranks, function):
    """`values` as float32 rows: one of rank ranks[0] becomes a single row; ranks[1] is rows already."""
    values = tf.convert_to_tensor(values, name=name, dtype=tf.float32)
    if values.shape.rank not in ranks:
        raise TypeError(f"{function}: {name} should have rank {ranks[0]} or {ranks[1]}, got "
                        f"{'an unknown rank' if values.shape.rank is None else values.shape.rank}")
    return values[None] if values.shape.rank == ranks[0] else values


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """tf.contrib.image.transform: each image through its projective transform (see the module).

    Args:
      images: 2-D to 4-D images of uint8, int32, int64 or a float dtype.
      transforms: one transform (8 numbers) for all images, or one per image ([batch, 8]).
      interpolation: "NEAREST" or "BILINEAR".
      output_shape: [height, width] of the output; the images' own by default.
      name: a name scope.

    Returns:
      The transformed images, of the rank and dtype of `images`.

    Raises:
      TypeError: images or transforms of a dtype or rank TF1 refused.
    """
    with tf.name_scope(name or "transform"):
        batch, back = _as_batch(images, "transform")
        transforms = _rows(transforms, "transforms", (1, 2), "transform")
        if output_shape is None:
            output_shape = tf.shape(batch)[1:3]
        output = tf.raw_ops.ImageProjectiveTransformV2(
            images=batch, transforms=transforms, output_shape=tf.convert_to_tensor(output_shape, tf.int32),
            interpolation=interpolation.upper(), fill_mode="CONSTANT")
        return back(output)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """tf.contrib.image.angles_to_projective_transforms: [n, 8] transforms rotating images of that height and width
    counterclockwise by each angle (radians) about their centre."""
    with tf.name_scope(name or "angles_to_projective_transforms"):
        angles = _rows(angles, "angles", (0, 1), "angles_to_projective_transforms")
        cos, sin = tf.cos(angles), tf.sin(angles)
        x_offset = ((image_width - 1) - (cos * (image_width - 1) - sin * (image_height - 1))) / 2.0
        y_offset = ((image_height - 1) - (sin * (image_width - 1) + cos * (image_height - 1))) / 2.0
        return tf.concat([cos[:, None], -sin[:, None], x_offset[:, None], sin[:, None], cos[:, None],
                          y_offset[:, None], tf.zeros((tf.shape(angles)[0], 2), tf.float32)], axis=1)


def rotate(images, angles, interpolation="NEAREST", name=None):
    """tf.contrib.image.rotate: images rotated counterclockwise by `angles` (radians: one for all, or one per
    image), corners outside the input 0. Returns images of the rank and dtype given."""
    with tf.name_scope(name or "rotate"):
        batch, back = _as_batch(images, "rotate")
        height = tf.cast(tf.shape(batch)[1], tf.float32)[None]
        width = tf.cast(tf.shape(batch)[2], tf.float32)[None]
        return back(transform(batch, angles_to_projective_transforms(angles, height, width),
                              interpolation=interpolation))


def translations_to_projective_transforms(translations, name=None):
    """tf.contrib.image.translations_to_projective_transforms: [n, 8] transforms moving images by [dx, dy]."""
    with tf.name_scope(name or "translations_to_projective_transforms"):
        translations = _rows(translations, "translations", (1, 2), "translations_to_projective_transforms")
        ones = tf.ones((tf.shape(translations)[0], 1), tf.float32)
        zeros = tf.zeros_like(ones)
        return tf.concat([ones, zeros, -translations[:, 0, None], zeros, ones, -translations[:, 1, None],
                          zeros, zeros], axis=1)


def translate(images, translations, interpolation="NEAREST", name=None):
    """tf.contrib.image.translate: images moved by translations ([dx, dy], or one per image): a pixel at (x, y)
    goes to (x + dx, y + dy); what comes in from outside is 0."""
    with tf.name_scope(name or "translate"):
        return transform(images, translations_to_projective_transforms(translations), interpolation=interpolation)


def flat_transforms_to_matrices(transforms):
    """tf.contrib.image.flat_transforms_to_matrices: [n, 8] transforms as [n, 3, 3] matrices."""
    transforms = tf.reshape(tf.convert_to_tensor(transforms, tf.float32), [-1, 8])
    return tf.reshape(tf.concat([transforms, tf.ones([tf.shape(transforms)[0], 1])], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """tf.contrib.image.matrices_to_flat_transforms: [n, 3, 3] matrices as [n, 8] transforms (each divided by
    its last entry)."""
    flat = tf.reshape(tf.convert_to_tensor(transform_matrices, tf.float32), [-1, 9])
    return (flat / flat[:, 8:9])[:, :8]


def compose_transforms(*transforms):
    """tf.contrib.image.compose_transforms: one transform that does to an image what applying each of
    `transforms` to it in the order given does (the product of their matrices, in that order), as TF1's.

    Raises:
      ValueError: no transform given.
    """
    if not transforms:
        raise ValueError("compose_transforms: transforms cannot be empty")
    composed = flat_transforms_to_matrices(transforms[0])
    for more in transforms[1:]:
        composed = tf.matmul(composed, flat_transforms_to_matrices(more))
    return matrices_to_flat_transforms(composed)

