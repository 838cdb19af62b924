"""What the CIFAR-10 pre-flight check costs: every record of a 50,000-record file parsed and checked.

    python benchmarks/cifar10_preflight.py [--records=50000] [--repeats=3]

Writes a train.tfrecords of random images in the official record format
(and the generator's manifest), then times input_fn.scan_records on it
(check_records's scan, which it runs once per file and process):
every record parsed, its image size and label checked, the count and the
SHA-256 compared with the manifest. Prints the median seconds (goal: a few).
"""

import json
import os
import statistics
import tempfile
import time

import harness
from absl import app, flags

from cifar10 import input_fn as cifar_input

FLAGS = flags.FLAGS
flags.DEFINE_integer("records", 50000, "Random CIFAR records to write.")
flags.DEFINE_integer("repeats", 3, "Timed passes.")


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as directory:
        path = harness.write_random_cifar_records(directory, FLAGS.records)
        with open(os.path.join(directory, cifar_input.MANIFEST), "w", encoding="utf-8") as manifest:
            json.dump({"train.tfrecords": {"records": FLAGS.records, "sha256": cifar_input.file_sha256(path)}},
                      manifest)
        seconds = []
        for _ in range(FLAGS.repeats):
            start = time.perf_counter()
            assert cifar_input.scan_records(path) == FLAGS.records
            seconds.append(time.perf_counter() - start)
        size = os.path.getsize(path) / 2**20
    print(f"cifar10_preflight {FLAGS.records} records ({size:.0f} MiB): median {statistics.median(seconds):.2f} s "
          f"(all: {', '.join(f'{s:.2f}' for s in seconds)}), goal: a few seconds", flush=True)


if __name__ == "__main__":
    app.run(main)
