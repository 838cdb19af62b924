"""A partitioned variable's slot as tf.estimator 2.15 saved it, one name per part each holding its slice only
(common.state.part_slots), read whole along the axis it was cut on; the round trip through the project's own
save is tests/state/test_tf215_model_dirs.py's tf1_dnn_partitioned."""

import numpy as np
import pytest
import tensorflow as tf

from common.internals import tensorflow_internals
from common.state import part_slots
from common.tf1_runtime import partitioned


def _saved_per_part(path, whole, axis):
    """Writes `whole` as TF 2.15 did: part k's slice (cut TF1's way on `axis`) under "v/t_<k>/Adagrad"."""
    var_list = {}
    for k, (start, size) in enumerate(part_slots.part_bounds(whole.shape[axis], 2)):
        offset = [0] * whole.ndim
        offset[axis] = start
        part = tf.Variable(np.take(whole, range(start, start + size), axis=axis))
        partitioned.mark_part(part, f"v/t_{k}/Adagrad", whole.shape, offset)
        var_list[f"v/t_{k}/Adagrad"] = [part]
    with tensorflow_internals.variable_ops():  # (TF1's Saver reads a slice's op, as the checkpoint store does)
        return tf.compat.v1.train.Saver(var_list).save(None, str(path))


def test_part_bounds_give_the_first_parts_the_extra_rows():
    assert part_slots.part_bounds(7, 3) == [(0, 3), (3, 2), (5, 2)]


@pytest.mark.parametrize("axis", [0, 1])
def test_a_slot_saved_per_part_reads_whole_on_the_axis_it_was_cut(tmp_path, axis):
    whole = np.arange(15, dtype=np.float32).reshape(5, 3)
    prefix = _saved_per_part(tmp_path / "ckpt", whole, axis)
    names = part_slots.per_part_names("v", "Adagrad", {"v/t_0/Adagrad", "v/t_1/Adagrad", "w"})
    assert names == ("v/t_0/Adagrad", "v/t_1/Adagrad")
    np.testing.assert_array_equal(part_slots.read_whole(prefix, names, [5, 3], tf.float32), whole)


def test_one_partition_is_not_per_part_and_an_unreadable_layout_raises(tmp_path):
    assert part_slots.per_part_names("v", "Adagrad", {"v/t_0/Adagrad"}) is None
    prefix = _saved_per_part(tmp_path / "ckpt", np.ones((4, 2), np.float32), 0)
    with pytest.raises(tf.errors.OpError):  # (listed as [4, 3]: no axis gives the slices it holds)
        part_slots.read_whole(prefix, part_slots.PerPartNames(["v/t_0/Adagrad", "v/t_1/Adagrad"]), [4, 3],
                              tf.float32)
