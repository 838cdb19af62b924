"""TF1's queue-runner input (tf.compat.v1.train's producers, batch and shuffle_batch, TFRecordReader,
match_filenames_once) built in a graph of its own by common.adapters.tensor_inputs: the batches, their order,
their static shapes and where they end, against TensorFlow 2.15's (tests/data/tf215_tf1/queues.json, made by
make_queues.py beside it). tests/adapters/test_graph_input.py feeds such input to the Estimator."""

import numpy as np
import pytest
import tensorflow as tf

from common.adapters import tensor_inputs as tf1_data
from tests import queue_records

V1, CASES, FEATURES = queue_records.V1, queue_records.CASES, queue_records.FEATURES


@pytest.fixture
def record_files(tmp_path):
    return queue_records.write_record_files(tmp_path)


def _pipelines(paths):
    """case name -> input_fn, built as the reference built it."""
    def batch(num_epochs, size, smaller):
        return lambda: V1.train.batch(queue_records.records(paths, num_epochs), batch_size=size,
                                      allow_smaller_final_batch=smaller)

    def sliced():
        a, b = V1.train.slice_input_producer([np.arange(10), np.arange(10) * 2.0], num_epochs=1, shuffle=False)
        return V1.train.batch([a, b], batch_size=3, allow_smaller_final_batch=True)

    return {
        "tfrecord_epochs2_batch4_allow_smaller_False": batch(2, 4, False),
        "tfrecord_epochs2_batch4_allow_smaller_True": batch(2, 4, True),
        "tfrecord_epochs2_batch5_allow_smaller_False": batch(2, 5, False),
        "tfrecord_epochs2_batch5_allow_smaller_True": batch(2, 5, True),
        "tfrecord_epochs1_batch4_allow_smaller_True": batch(1, 4, True),
        "slice_input_producer_batch3": sliced,
        "range_input_producer_batch4": lambda: V1.train.batch(
            [V1.train.range_input_producer(5, num_epochs=2, shuffle=False).dequeue()], 4,
            allow_smaller_final_batch=True),
        "input_producer_batch4": lambda: V1.train.batch(
            [V1.train.input_producer(tf.constant([10, 20, 30, 40, 50]), num_epochs=2, shuffle=False).dequeue()], 4,
            allow_smaller_final_batch=True),
    }


@pytest.mark.parametrize("name", ["tfrecord_epochs2_batch4_allow_smaller_False",
                                  "tfrecord_epochs2_batch5_allow_smaller_False",
                                  "tfrecord_epochs2_batch5_allow_smaller_True",
                                  "tfrecord_epochs1_batch4_allow_smaller_True", "slice_input_producer_batch3",
                                  "range_input_producer_batch4", "input_producer_batch4"])
def test_queue_pipelines_give_tf1s_batches_in_tf1s_order_and_end_where_tf1s_ended(record_files, name):
    reference = CASES[name]
    dataset = tf1_data.dataset_of(_pipelines(record_files)[name])
    got = [[column.tolist() for column in tf.nest.flatten(element)] for element in dataset.as_numpy_iterator()]
    want = reference["batches"]
    if reference["batch_returned_single_tensor_not_list"]:
        want = [[batch] if not isinstance(batch[0], list) else batch for batch in want]
    assert got == want
    specs = tf.nest.flatten(dataset.element_spec)
    assert [spec.shape.as_list() for spec in specs] == [t["static_shape"] for t in reference["output_tensors"]]
    assert [spec.dtype.name for spec in specs] == [t["dtype"] for t in reference["output_tensors"]]
    assert [len(e) for e in got] == [len(e) for e in want]
    assert len(list(dataset)) == len(want)  # a second pass builds the pipeline again, as each TF1 call did


@pytest.mark.parametrize("size, smaller", [(4, False), (5, False), (5, True)])
def test_shuffle_batch_sees_what_tf1_saw(record_files, size, smaller):
    reference = CASES[f"shuffle_batch_epochs1_batch{size}_allow_smaller_{smaller}"]

    def input_fn():
        return V1.train.shuffle_batch(queue_records.records(record_files, 1), batch_size=size, capacity=20,
                                      min_after_dequeue=5, seed=7, allow_smaller_final_batch=smaller)

    batches = list(tf1_data.dataset_of(input_fn).as_numpy_iterator())
    assert [len(ids) for ids, _ in batches] == reference["batch_sizes"]
    ids = sorted(int(i) for batch, _ in batches for i in batch)
    if reference["ids_multiset_is_deterministic"]:
        assert ids == reference["ids_seen_sorted"]
    for batch_ids, xs in batches:
        np.testing.assert_allclose(xs, batch_ids * 0.5)


def test_match_filenames_once_feeds_a_queue_input_built_in_a_graph(record_files, tmp_path):
    def input_fn():
        files = tf1_data.match_filenames_once(str(tmp_path / "file_*.tfrecord"))  # TF 2's own refuses a graph queue
        reader = V1.TFRecordReader()
        _, serialized = reader.read(V1.train.string_input_producer(files, num_epochs=1, shuffle=False))
        return V1.train.batch([V1.parse_single_example(serialized, FEATURES)["id"]], batch_size=12)

    (batch,) = list(tf1_data.dataset_of(input_fn).as_numpy_iterator())
    assert sorted(batch.tolist()) == list(range(7)) + list(range(100, 105))
