"""common.state.idx_files: IDX arrays written and read back, gz or raw; bad files named with their problem."""

import gzip

import numpy as np
import pytest

from common.state import idx_files


@pytest.mark.parametrize("name", ["labels-idx1-ubyte", "labels-idx1-ubyte.gz"])
def test_round_trip_gz_or_raw_with_the_header_mnist_files_have(tmp_path, name):
    path = str(tmp_path / name)
    labels = (np.arange(60) % 10).astype(np.uint8)
    idx_files.write_idx(path, labels)
    raw = (tmp_path / name).read_bytes()
    raw = gzip.decompress(raw) if name.endswith(".gz") else raw
    assert raw[:8] == bytes([0, 0, 8, 1, 0, 0, 0, 60])
    back = idx_files.read_idx(path)
    assert back.dtype == np.uint8
    np.testing.assert_array_equal(back, labels)
    images = np.arange(2 * 3 * 4, dtype=np.int8).reshape(2, 3, 4)
    idx_files.write_idx(path, images)
    np.testing.assert_array_equal(idx_files.read_idx(path), images)


def test_big_endian_types_are_read():
    data = bytes([0, 0, 0x0C, 1, 0, 0, 0, 2]) + (7).to_bytes(4, "big") + (-3).to_bytes(4, "big", signed=True)
    assert idx_files.parse_idx(data).tolist() == [7, -3]


def test_bad_files_name_the_file_and_the_problem(tmp_path):
    good = bytes([0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3])
    with pytest.raises(idx_files.DataFileError, match=r"^f: wrong magic number 0x12340801"):
        idx_files.parse_idx(b"\x12\x34" + good[2:], "f")
    with pytest.raises(idx_files.DataFileError, match=r"^f: truncated data: the header \[3\] promises 11 bytes"):
        idx_files.parse_idx(good[:-1], "f")
    with pytest.raises(idx_files.DataFileError, match=r"^f: 1 unexpected bytes after the \[3\] array"):
        idx_files.parse_idx(good + b"\0", "f")
    with pytest.raises(idx_files.DataFileError, match="too short for an IDX header"):
        idx_files.parse_idx(b"\0\0", "f")
    (tmp_path / "bad.gz").write_bytes(b"not gzip at all")
    with pytest.raises(idx_files.DataFileError, match="bad.gz: cannot be read"):
        idx_files.read_idx(str(tmp_path / "bad.gz"))
    with pytest.raises(ValueError, match="need a uint8 or int8 array"):
        idx_files.write_idx(str(tmp_path / "x"), np.zeros(3, np.float32))
    assert not (tmp_path / "x").exists()
