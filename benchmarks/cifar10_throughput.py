"""ResNet-44 training throughput and memory: cifar10.main vs Keras 3 model.fit, same run.

    python benchmarks/cifar10_throughput.py [--steps=30] [--repeats=3] [--num_layers=44] [--main_flags=--jit_compile]

Both train the same network at batch 128 on the same synthetic batch
(cifar10.input_fn.synthetic_dataset), each in its own process under
/usr/bin/time, the two sides alternating `repeats` times. Prints the median
examples/sec of both and their ratio (targets: >= 1.0, the performance goal
>= 1.2), and the median peak resident memory of both (target: ours <=
Keras's); a single process's peak varies by about 100 MiB from run to run.
"""

import statistics
import sys
import tempfile

import harness
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 30, "Measured training steps per run.")
flags.DEFINE_integer("repeats", 3, "Runs of each side; the medians are printed.")
flags.DEFINE_integer("num_layers", 44, "ResNet depth.")
flags.DEFINE_integer("batch_size", 128, "Training batch.")
flags.DEFINE_list("main_flags", [], "Extra flags for cifar10.main.")
flags.DEFINE_boolean("keras_worker", False, "Internal: run the Keras side and print its figure.")


def keras_side():
    import keras
    from cifar10 import input_fn, resnet
    model = resnet.ResNetCifar10(FLAGS.num_layers).build()
    rate = harness.keras_fit_examples_per_sec(
        model, input_fn.synthetic_dataset(FLAGS.batch_size),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        keras.optimizers.SGD(0.1, momentum=0.9), FLAGS.batch_size, FLAGS.steps)
    print(f"KERAS_EXAMPLES_PER_SEC {rate}")


def ours_once():
    """(examples/sec, peak MiB) of one cifar10.main run."""
    out, err, status, rss = harness.run_measuring_memory([
        sys.executable, "-m", "cifar10.main", f"--job_dir={tempfile.mkdtemp(prefix='cifar_bench_')}",
        "--synthetic_data", f"--num_layers={FLAGS.num_layers}", f"--train_steps={FLAGS.steps + 10}",
        f"--train_batch_size={FLAGS.batch_size}", "--eval_steps=1", "--save_checkpoints_steps=100000",
        *FLAGS.main_flags])
    averages = [line for line in err.splitlines() if "Average examples/sec:" in line]
    if status or not averages:
        sys.exit(f"cifar10.main failed ({status}):\n{err[-3000:]}")
    return float(averages[-1].split("Average examples/sec: ")[1].split()[0]), rss


def keras_once():
    """(examples/sec, peak MiB) of one Keras fit run."""
    out, err, status, rss = harness.run_measuring_memory([
        sys.executable, __file__, "--keras_worker", f"--steps={FLAGS.steps}", f"--num_layers={FLAGS.num_layers}",
        f"--batch_size={FLAGS.batch_size}"])
    if status:
        sys.exit(f"Keras side failed ({status}):\n{err[-3000:]}")
    return float(out.split("KERAS_EXAMPLES_PER_SEC ")[1].split()[0]), rss


def main(argv):
    del argv
    if FLAGS.keras_worker:
        keras_side()
        return
    runs = {"ours": [], "keras": []}
    for _ in range(FLAGS.repeats):
        runs["ours"].append(ours_once())
        runs["keras"].append(keras_once())
        print(f"run: cifar10.main {runs['ours'][-1][0]:.1f} ex/s {runs['ours'][-1][1]:.0f} MiB, "
              f"Keras fit {runs['keras'][-1][0]:.1f} ex/s {runs['keras'][-1][1]:.0f} MiB", flush=True)
    ours, theirs = (statistics.median(rate for rate, _ in runs[side]) for side in ("ours", "keras"))
    ours_rss, keras_rss = (statistics.median(rss for _, rss in runs[side]) for side in ("ours", "keras"))
    name = f"ResNet-{FLAGS.num_layers} batch {FLAGS.batch_size}, median of {FLAGS.repeats}"
    print(f"cifar10_throughput {name}: cifar10.main {ours:.1f} ex/s, Keras fit {theirs:.1f} ex/s, "
          f"ratio {ours / theirs:.2f} (targets >= 1.0, goal >= 1.2)")
    print(f"cifar10_memory {name}: cifar10.main peak RSS {ours_rss:.0f} MiB, Keras fit {keras_rss:.0f} MiB, "
          f"ratio {ours_rss / keras_rss:.2f} (target <= 1.0)")


if __name__ == "__main__":
    app.run(main)
