"""Random and mutated bytes only ever raise the readers' own error types."""

import gzip

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cifar10 import generate_cifar10_tfrecords as generator
from cifar10.input_fn import CifarDataError
from common.state import idx_files
from tests import cifar_files

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID_IDX = bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3]) + bytes(range(18))
VALID_BATCH = cifar_files.batch_bytes(np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072) % 251, [3, 7])


def _mutate(data, edits):
    data = bytearray(data)
    for position, value in edits:
        if data:
            data[position % len(data)] = value
    return bytes(data)


def _parse_idx(data):
    try:
        array = idx_files.parse_idx(data, "fuzz")
    except idx_files.DataFileError:
        return
    assert isinstance(array, np.ndarray)


def _parse_batch(data):
    try:
        images, labels = generator.parse_batch(data, "fuzz")
    except CifarDataError:
        return
    assert images.shape == (len(labels), 3072)


@FUZZ
@given(st.binary(max_size=2048))
def test_idx_random_bytes(data):
    _parse_idx(data)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6), st.integers(0, 40))
def test_idx_mutated_and_cut(edits, cut):
    _parse_idx(_mutate(VALID_IDX, edits)[:len(VALID_IDX) - cut])


@FUZZ
@given(st.binary(max_size=256))
def test_idx_gz_random_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "x-idx1-ubyte.gz"
    path.write_bytes(gzip.compress(data) if len(data) % 2 else data)
    try:
        idx_files.read_idx(str(path))
    except idx_files.DataFileError:
        pass


@FUZZ
@given(st.binary(max_size=2048))
def test_cifar_pickle_random_bytes(data):
    _parse_batch(data)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8), st.integers(0, 200))
def test_cifar_pickle_mutated_and_cut(edits, cut):
    _parse_batch(_mutate(VALID_BATCH, edits)[:len(VALID_BATCH) - cut])
