"""IDX files (MNIST's format: magic 0x0000, a type code, the rank, big-endian sizes), read and written.

The mnist job reads its data from them, and so did TF1's MNIST tutorials
(common.contrib.learn_datasets); both name the file in every error.
"""

import gzip
import zlib

import numpy as np
import tensorflow as tf

from common.state import atomic

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_IDX_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09}


class DataFileError(ValueError):
    """A data file that cannot be used; the message names the file."""

    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")
        self.path = path


def parse_idx(data, path="<bytes>"):
    """The array stored in IDX bytes: magic 0x0000, a type code, the rank, big-endian sizes."""
    if len(data) < 4:
        raise DataFileError(path, f"{len(data)} bytes is too short for an IDX header")
    if data[0] or data[1] or data[2] not in _IDX_TYPES or not data[3]:
        magic = int.from_bytes(data[:4], "big")
        raise DataFileError(
            path, f"wrong magic number 0x{magic:08x}; IDX files start with 0x00000801 (labels) "
            "or 0x00000803 (images)")
    rank = data[3]
    header = 4 + 4 * rank
    if len(data) < header:
        raise DataFileError(path, f"truncated header: rank {rank} needs {header} bytes, file has {len(data)}")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    dtype = np.dtype(_IDX_TYPES[data[2]])
    count = int(np.prod(dims, dtype=object))
    expected = header + count * dtype.itemsize
    if len(data) < expected:
        raise DataFileError(
            path, f"truncated data: the header {dims} promises {expected} bytes, the file has {len(data)}")
    if len(data) > expected:
        raise DataFileError(path, f"{len(data) - expected} unexpected bytes after the {dims} array")
    return np.frombuffer(data, dtype, offset=header, count=count).reshape(dims)


def read_idx(path):
    """Reads an IDX file, gzip-compressed when its name ends in .gz."""
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error, tf.errors.OpError) as error:
        raise DataFileError(path, f"cannot be read: {error}") from error
    return parse_idx(data, path)


def write_idx(path, array):
    """Writes a uint8/int8 array as IDX (gzip when the name ends in .gz), atomically."""
    array = np.asarray(array)
    if array.dtype not in _IDX_CODES or not 1 <= array.ndim <= 255:
        raise ValueError(f"write_idx: need a uint8 or int8 array of rank 1-255, got {array.dtype} rank {array.ndim}")
    data = bytes([0, 0, _IDX_CODES[array.dtype], array.ndim])
    data += b"".join(int(d).to_bytes(4, "big") for d in array.shape) + array.tobytes()
    atomic.write_bytes(path, gzip.compress(data) if path.endswith(".gz") else data)

