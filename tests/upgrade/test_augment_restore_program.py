"""The contrib-era program tests/programs/tf1_augment_restore.py, upgraded with no hand edit and run: its images
are turned and shifted by tf.contrib.image, filter_variables trains the head's kernel alone, and TF1's checkpoint
reader reads the model dir. TF 2.15 cannot run tf.contrib, so the numbers are TF1's documented ones, in numpy."""

import numpy as np

from tests.programs import upgraded


def _softmax(logits):
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def test_augmented_images_train_the_filtered_variables_and_the_reader_reads_them(tmp_path):
    program = upgraded("tf1_augment_restore", str(tmp_path))
    values = program.train(str(tmp_path / "model"), steps=3)
    augmented = np.zeros_like(program.PICTURES)
    augmented[:, :, 1:] = np.rot90(program.PICTURES, axes=(1, 2))[:, :, :-1]  # (a quarter turn, one pixel right)
    hidden = np.maximum(augmented.reshape(8, 25).astype(np.float64) @ program.BODY_KERNEL, 0.0)
    kernel = program.HEAD_KERNEL.astype(np.float64)
    for step in range(3):
        rows = slice(4 * (step % 2), 4 * (step % 2) + 4)
        error = _softmax(hidden[rows] @ kernel) - np.eye(2)[program.LABELS[rows]]
        kernel = kernel - 0.5 * hidden[rows].T @ error / 4
    assert values["global_step"] == 3
    np.testing.assert_allclose(values["head/dense/kernel"], kernel, rtol=1e-5)
    np.testing.assert_array_equal(values["head/dense/bias"], np.zeros(2))  # (excluded: not trained)
    np.testing.assert_array_equal(values["body/dense/kernel"], program.BODY_KERNEL)  # (not in var_list)
    assert not np.allclose(kernel, program.HEAD_KERNEL)  # (the head did learn)
