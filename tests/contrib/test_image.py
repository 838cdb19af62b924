"""tf.contrib.image's projective transforms as TF1 documented them: a quarter turn is numpy's rot90, a shift by
whole pixels is a move filled with zeros, composing is the matrix product, and TF1's refusals."""

import math

import numpy as np
import pytest
import tensorflow as tf

from common.contrib import image

PICTURE = np.arange(20, dtype=np.float32).reshape(4, 5)  # (not square: the centre of rotation matters)
SQUARE = np.arange(16, dtype=np.float32).reshape(4, 4)


@pytest.mark.parametrize("shape", [(4, 4), (4, 4, 1), (1, 4, 4, 1)])
def test_a_quarter_turn_is_counterclockwise_in_every_rank(shape):
    turned = image.rotate(SQUARE.reshape(shape), math.pi / 2)
    assert turned.shape == shape
    np.testing.assert_array_equal(np.reshape(turned, (4, 4)), np.rot90(SQUARE))


def test_a_half_turn_about_the_centre_and_one_angle_per_image():
    pictures = np.stack([PICTURE, PICTURE])[..., None]
    turned = image.rotate(pictures, [math.pi, 0.0])
    np.testing.assert_array_equal(turned[0, ..., 0], PICTURE[::-1, ::-1])
    np.testing.assert_array_equal(turned[1, ..., 0], PICTURE)


def test_a_translation_moves_pixels_right_and_down_and_fills_with_zeros():
    moved = image.translate(PICTURE[None, ..., None], [2.0, 1.0])[0, ..., 0].numpy()
    expected = np.zeros_like(PICTURE)
    expected[1:, 2:] = PICTURE[:-1, :-2]
    np.testing.assert_array_equal(moved, expected)


def test_integer_images_keep_their_dtype_and_bilinear_averages_half_a_pixel():
    moved = image.translate(PICTURE.astype(np.uint8), [0.0, 0.0])
    assert moved.dtype == tf.uint8
    half = image.translate(PICTURE, [0.5, 0.0], interpolation="BILINEAR").numpy()
    np.testing.assert_allclose(half[:, 1:], (PICTURE[:, 1:] + PICTURE[:, :-1]) / 2)


def test_composed_transforms_are_the_product_of_their_matrices():
    turn = image.angles_to_projective_transforms(math.pi / 2, 4.0, 4.0)
    shift = image.translations_to_projective_transforms([1.0, -2.0])
    composed = image.compose_transforms(turn, shift)
    matrices = [np.append(t, 1.0).reshape(3, 3) for t in (turn.numpy()[0], shift.numpy()[0])]
    np.testing.assert_allclose(composed.numpy()[0], (matrices[0] @ matrices[1]).reshape(9)[:8], rtol=1e-6)
    once = image.transform(SQUARE, composed)  # (as applying the transforms to the image in the order given)
    np.testing.assert_array_equal(once, image.transform(image.transform(SQUARE, turn), shift))
    assert not np.array_equal(once, image.transform(image.transform(SQUARE, shift), turn))
    np.testing.assert_allclose(image.matrices_to_flat_transforms(image.flat_transforms_to_matrices(turn) * 2.0),
                               turn, rtol=1e-6)


def test_what_tf1_refused_is_refused_naming_the_function_and_the_value():
    with pytest.raises(TypeError, match="rotate: images should have rank between 2 and 4, got rank 1"):
        image.rotate(np.zeros(3, np.float32), 0.1)
    with pytest.raises(TypeError, match="transform: invalid dtype bool of images"):
        image.transform(np.zeros((2, 2), bool), [1, 0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(TypeError, match="transform: transforms should have rank 1 or 2, got 3"):
        image.transform(PICTURE, np.zeros((1, 1, 8)))
    with pytest.raises(ValueError, match="compose_transforms: transforms cannot be empty"):
        image.compose_transforms()
