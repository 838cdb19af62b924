"""ResNet-44 training throughput and memory: cifar10.main vs Keras 3 model.fit, same run.

    python benchmarks/cifar10_throughput.py [--steps=30] [--repeats=3] [--num_layers=44] [--dtype=float32]
        [--main_flags=--num_gpus=2,--split_gpu=2]

Both train the same network at batch 128 on the same synthetic batch
(cifar10.input_fn.synthetic_dataset), each in its own process (peak
resident memory from wait4, as /usr/bin/time -v reads it), the two sides
alternating `repeats` times; both leave their first `warmup` steps out.
cifar10.main runs with its default CPU kernels (oneDNN, which `common`
turns on), Keras fit with TensorFlow's own default, and Keras fit again
with oneDNN as a reference.
Prints the median examples/sec of both and their ratio (targets: >= 1.0,
the performance goal >= 1.2), and the median peak resident memory of both
(target: ours <= Keras's); a single process's peak varies by about 100 MiB
from run to run. Keras fit compiles with XLA on a GPU by default
(jit_compile="auto"), as cifar10.main does on one GPU tower.
"""

import statistics
import sys

import harness
from absl import app, flags

from common.devices import precision

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 30, "Measured training steps per run.")
flags.DEFINE_integer("warmup", 20, "Steps left out of the figure at the start of each run (tracing, autotuning).")
flags.DEFINE_integer("repeats", 3, "Runs of each side; the medians are printed.")
harness.define_cifar10_main_flags()
flags.DEFINE_enum("dtype", "float32", list(precision.DTYPES), "Compute dtype of both sides.")
flags.DEFINE_boolean("keras_worker", False, "Internal: run the Keras side and print its figure.")


def keras_side():
    import keras
    from cifar10 import input_fn
    rate = harness.keras_fit_examples_per_sec(
        harness.keras_resnet(FLAGS.num_layers, FLAGS.dtype), input_fn.synthetic_dataset(FLAGS.batch_size),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        keras.optimizers.SGD(0.1, momentum=0.9), FLAGS.batch_size, FLAGS.steps,
        warmup=FLAGS.warmup)
    print(f"EXAMPLES_PER_SEC {rate}")


def ours_once():
    """(examples/sec, peak MiB) of one cifar10.main run."""
    _, err, rss = harness.run_cifar10_main(FLAGS.warmup + FLAGS.steps, f"--dtype={FLAGS.dtype}")
    return harness.logged_examples_per_sec(err, FLAGS.warmup), rss


def keras_once(onednn=None):
    """(examples/sec, peak MiB) of one Keras fit run (oneDNN: see harness.child_env)."""
    return harness.run_worker([
        sys.executable, __file__, "--keras_worker", f"--steps={FLAGS.steps}", f"--warmup={FLAGS.warmup}",
        f"--num_layers={FLAGS.num_layers}", f"--batch_size={FLAGS.batch_size}", f"--dtype={FLAGS.dtype}"], onednn)


def main(argv):
    del argv
    if FLAGS.keras_worker:
        keras_side()
        return
    runs = {"ours": [], "keras": [], "keras_onednn": []}
    for _ in range(FLAGS.repeats):
        runs["ours"].append(ours_once())
        runs["keras"].append(keras_once())
        runs["keras_onednn"].append(keras_once(onednn=True))
        print("run: " + ", ".join(f"{side} {runs[side][-1][0]:.1f} ex/s {runs[side][-1][1]:.0f} MiB"
                                  for side in runs), flush=True)
    rate, rss = ({side: statistics.median(run[index] for run in runs[side]) for side in runs} for index in (0, 1))
    name = " ".join([f"ResNet-{FLAGS.num_layers} batch {FLAGS.batch_size} {FLAGS.dtype}", *FLAGS.main_flags])
    name += f", median of {FLAGS.repeats}"
    print(f"cifar10_throughput {name}: cifar10.main {rate['ours']:.1f} ex/s, Keras fit {rate['keras']:.1f} ex/s, "
          f"ratio {rate['ours'] / rate['keras']:.2f} (targets >= 1.0, goal >= 1.2); Keras fit with oneDNN "
          f"{rate['keras_onednn']:.1f} ex/s, ratio {rate['ours'] / rate['keras_onednn']:.2f}")
    print(f"cifar10_memory {name}: cifar10.main peak RSS {rss['ours']:.0f} MiB, Keras fit {rss['keras']:.0f} MiB, "
          f"ratio {rss['ours'] / rss['keras']:.2f} (target <= 1.0); Keras fit with oneDNN {rss['keras_onednn']:.0f} "
          f"MiB, ratio {rss['ours'] / rss['keras_onednn']:.2f}")


if __name__ == "__main__":
    app.run(main)
