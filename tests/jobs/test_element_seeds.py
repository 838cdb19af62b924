"""Per-example seeds: the same seed gives the same seeds, paired with the same elements, every time."""

import numpy as np
import tensorflow as tf

from common.jobs import element_seeds


def test_each_element_gets_a_seed_pair_and_a_seed_repeats_them():
    first = list(element_seeds.with_element_seeds(tf.data.Dataset.range(5), seed=3))
    again = list(element_seeds.with_element_seeds(tf.data.Dataset.range(5), seed=3))
    other = list(element_seeds.with_element_seeds(tf.data.Dataset.range(5), seed=4))
    assert [int(x) for x, _ in first] == [0, 1, 2, 3, 4]
    assert all(seed.shape == (2,) and seed.dtype == tf.int64 for _, seed in first)
    np.testing.assert_array_equal(np.stack([s for _, s in first]), np.stack([s for _, s in again]))
    assert not np.array_equal(np.stack([s for _, s in first]), np.stack([s for _, s in other]))
    assert len({tuple(s.numpy()) for _, s in first}) == 5  # every element its own seed
