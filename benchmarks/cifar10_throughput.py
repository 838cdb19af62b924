"""ResNet-44 training throughput and memory: cifar10.main vs Keras 3 model.fit, same run.

    python benchmarks/cifar10_throughput.py [--steps=40] [--num_layers=44] [--main_flags=--jit_compile]

Both train the same network at batch 128 on the same synthetic batch
(cifar10.input_fn.synthetic_dataset), each in its own process under
/usr/bin/time. Prints examples/sec of both and their ratio (targets: >= 1.0,
the performance goal >= 1.2), and the peak resident memory of both (target:
ours <= Keras's).
"""

import sys
import tempfile

import harness
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 40, "Measured training steps.")
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


def main(argv):
    del argv
    if FLAGS.keras_worker:
        keras_side()
        return
    ours_out, ours_err, status, ours_rss = harness.run_measuring_memory([
        sys.executable, "-m", "cifar10.main", f"--job_dir={tempfile.mkdtemp(prefix='cifar_bench_')}",
        "--synthetic_data", f"--num_layers={FLAGS.num_layers}", f"--train_steps={FLAGS.steps + 10}",
        f"--train_batch_size={FLAGS.batch_size}", "--eval_steps=1", "--save_checkpoints_steps=100000",
        *FLAGS.main_flags])
    averages = [line for line in ours_err.splitlines() if "Average examples/sec:" in line]
    if status or not averages:
        sys.exit(f"cifar10.main failed ({status}):\n{ours_err[-3000:]}")
    ours = float(averages[-1].split("Average examples/sec: ")[1].split()[0])
    keras_out, keras_err, status, keras_rss = harness.run_measuring_memory([
        sys.executable, __file__, "--keras_worker", f"--steps={FLAGS.steps}", f"--num_layers={FLAGS.num_layers}",
        f"--batch_size={FLAGS.batch_size}"])
    if status:
        sys.exit(f"Keras side failed ({status}):\n{keras_err[-3000:]}")
    theirs = float(keras_out.split("KERAS_EXAMPLES_PER_SEC ")[1].split()[0])
    name = f"ResNet-{FLAGS.num_layers} batch {FLAGS.batch_size}"
    print(f"cifar10_throughput {name}: cifar10.main {ours:.1f} ex/s, Keras fit {theirs:.1f} ex/s, "
          f"ratio {ours / theirs:.2f} (targets >= 1.0, goal >= 1.2)")
    print(f"cifar10_memory {name}: cifar10.main peak RSS {ours_rss:.0f} MiB, Keras fit {keras_rss:.0f} MiB, "
          f"ratio {ours_rss / keras_rss:.2f} (target <= 1.0)")


if __name__ == "__main__":
    app.run(main)
