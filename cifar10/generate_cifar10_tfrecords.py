"""Convert the CIFAR-10 python release into the TFRecords the example trains on.

    python -m cifar10.generate_cifar10_tfrecords --data_dir=DIR

Reads DIR/cifar-10-python.tar.gz (downloaded from the official address
when absent and the network allows) and writes DIR/train.tfrecords
(data_batch_1-4), DIR/validation.tfrecords (data_batch_5) and
DIR/eval.tfrecords (test_batch). --validation_size=5000 gives the
45,000/5,000 split instead. Records are what the official script wrote:
`image` (the 3,072 raw bytes, channel-major) and `label` (int64), so files
made by either script read the same. Each file is written under a temporary
name and renamed when complete.
"""

import hashlib
import io
import json
import os
import pickle
import tarfile
import urllib.request

import numpy as np
import tensorflow as tf
from absl import app, flags

from cifar10.input_fn import MANIFEST, CifarDataError, file_sha256
from common.jobs import cli, process
from common.state import atomic

CIFAR_FILENAME = "cifar-10-python.tar.gz"
CIFAR_DOWNLOAD_URL = "https://www.cs.toronto.edu/~kriz/" + CIFAR_FILENAME
CIFAR_SIZE = 170498071
CIFAR_MD5 = "c58f30108f718f92721af3b95e74349a"
BATCH_DIR = "cifar-10-batches-py"
TRAIN_BATCHES = [f"data_batch_{i}" for i in range(1, 6)]
TEST_BATCH = "test_batch"
IMAGE_BYTES = 32 * 32 * 3
NUM_CLASSES = 10

FLAGS = flags.FLAGS


class _ArraysOnly(pickle.Unpickler):
    """Unpickles numpy arrays and plain Python values, nothing else: a
    tarball from elsewhere cannot run code through pickle."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")}

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        return super().find_class(module, name)


def parse_batch(data, name):
    """(images uint8 [N, 3072] channel-major, labels int64 [N]) from one pickled batch."""
    try:
        batch = _ArraysOnly(io.BytesIO(data), encoding="bytes").load()
    except Exception as error:  # pickle raises many types on bad bytes
        raise CifarDataError(f"{name}: not a CIFAR-10 pickle batch ({type(error).__name__}: {error})") from error
    if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
        raise CifarDataError(f"{name}: expected a dict with b'data' and b'labels'")
    images, labels = batch[b"data"], batch[b"labels"]
    if not isinstance(images, np.ndarray) or images.dtype != np.uint8 or images.ndim != 2 \
            or images.shape[1] != IMAGE_BYTES:
        shape = getattr(images, "shape", type(images).__name__)
        raise CifarDataError(f"{name}: b'data' must be uint8 [N, {IMAGE_BYTES}], got {shape}")
    try:
        labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError) as error:
        raise CifarDataError(f"{name}: b'labels' is not a list of integers") from error
    if len(labels) != len(images):
        raise CifarDataError(f"{name}: {len(labels)} labels for {len(images)} images")
    if len(labels) and (labels.min() < 0 or labels.max() >= NUM_CLASSES):
        raise CifarDataError(f"{name}: labels must be in 0..{NUM_CLASSES - 1}")
    return images, labels


def read_tarball(path):
    """{batch name: (images, labels)} for the five training batches and the test batch."""
    batches = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for name in TRAIN_BATCHES + [TEST_BATCH]:
                try:
                    member = tar.extractfile(f"{BATCH_DIR}/{name}")
                except KeyError:
                    member = None
                if member is None:
                    raise CifarDataError(f"{path}: has no {BATCH_DIR}/{name}")
                batches[name] = parse_batch(member.read(), f"{path}:{BATCH_DIR}/{name}")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise CifarDataError(f"{path}: not a readable .tar.gz ({error})") from error
    return batches


def _md5(path):
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(path, url=CIFAR_DOWNLOAD_URL, timeout=60):
    """Fetches the tarball to `path` (atomically) and checks its size and MD5."""
    try:
        with atomic.atomic_path(path) as temp:
            with urllib.request.urlopen(url, timeout=timeout) as response, open(temp, "wb") as out:
                for block in iter(lambda: response.read(1 << 20), b""):
                    out.write(block)
            size, md5 = os.path.getsize(temp), _md5(temp)
            if (size, md5) != (CIFAR_SIZE, CIFAR_MD5):
                raise CifarDataError(
                    f"{url}: downloaded {size} bytes with MD5 {md5}; expected {CIFAR_SIZE} bytes, MD5 {CIFAR_MD5}")
    except OSError as error:
        raise CifarDataError(
            f"{path} does not exist and it could not be downloaded from {url} ({error}). "
            f"Download {CIFAR_FILENAME} by other means and put it at {path}") from error


def _example(image, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
    })).SerializeToString()


def write_tfrecords(path, images, labels):
    """Writes one Example per image under a temporary name, then renames."""
    with atomic.atomic_path(path) as temp:
        with tf.io.TFRecordWriter(temp) as writer:
            for image, label in zip(images, labels):
                writer.write(_example(image, label))


def split(batches, validation_size=None):
    """{"train", "validation", "eval"} -> (images, labels); validation is the
    last `validation_size` training images, by default data_batch_5."""
    images = np.concatenate([batches[name][0] for name in TRAIN_BATCHES])
    labels = np.concatenate([batches[name][1] for name in TRAIN_BATCHES])
    if validation_size is None:
        validation_size = len(batches[TRAIN_BATCHES[-1]][1])
    if not 0 <= validation_size < len(labels):
        raise CifarDataError(f"--validation_size={validation_size} must be below the {len(labels)} training images")
    cut = len(labels) - validation_size
    return {"train": (images[:cut], labels[:cut]), "validation": (images[cut:], labels[cut:]),
            "eval": batches[TEST_BATCH]}


def generate(data_dir, validation_size=None, url=CIFAR_DOWNLOAD_URL):
    """Writes the three TFRecord files into data_dir, and the manifest of their
    record counts and checksums that the pre-flight check reads; returns {subset: count}."""
    tarball = os.path.join(data_dir, CIFAR_FILENAME)
    if not os.path.exists(tarball):
        print(f"{tarball} not found; downloading {url}", flush=True)
        download(tarball, url)
    subsets = split(read_tarball(tarball), validation_size)
    counts, manifest = {}, {}
    for subset, (images, labels) in subsets.items():
        output = os.path.join(data_dir, f"{subset}.tfrecords")
        print(f"Generating {output} ({len(labels)} images)", flush=True)
        write_tfrecords(output, images, labels)
        counts[subset] = len(labels)
        manifest[os.path.basename(output)] = {"records": len(labels), "sha256": file_sha256(output)}
    atomic.write_text(os.path.join(data_dir, MANIFEST), json.dumps(manifest, indent=1))
    return counts


def define_flags():
    """The command's flags, defined only when it runs (tests import this module)."""
    flags.DEFINE_string("data_dir", None, "Where cifar-10-python.tar.gz is (or goes) and the TFRecords go.")
    flags.DEFINE_integer("validation_size", None,
                         "Training images held out as validation; default data_batch_5 (10,000), 5000 for 45k/5k.",
                         lower_bound=0)
    flags.mark_flag_as_required("data_dir")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    cli.check_writable_dir("data_dir", FLAGS.data_dir)
    os.makedirs(FLAGS.data_dir, exist_ok=True)
    generate(FLAGS.data_dir, FLAGS.validation_size)
    print("Done!")


if __name__ == "__main__":
    define_flags()
    process.run(cli.reporting_errors(main, CifarDataError))
