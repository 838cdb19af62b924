"""1 process vs 2 local worker processes (TF_CONFIG on 127.0.0.1), MNIST CNN.

    python benchmarks/multiworker_throughput.py [--steps=300] [--batch_size=64]

Runs `python -m mnist.main` once alone and once as a chief/worker pair, each
host with --train_batch_size=batch_size, and prints global examples/sec of
both (per-host figure x hosts). On a 2-core machine two workers share the
cores, so expect no speed-up: the figure shows the cost of the cross-host
all-reduce, not a gain.
"""

import json
import socket
import subprocess
import sys
import tempfile

import harness
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 300, "Global steps (the rate is taken from step 100 on).")
flags.DEFINE_integer("batch_size", 64, "Batch per host.")


def command(model_dir):
    return [sys.executable, "-m", "mnist.main", f"--model_dir={model_dir}", f"--train_steps={FLAGS.steps}",
            f"--train_batch_size={FLAGS.batch_size}", "--validation_fraction=0", "--eval_every_steps=100000",
            "--random_seed=1"]


def examples_per_sec(stderr):
    """Rate from step 100 on: mnist.main logs every 100 steps, and its first line includes the tracing."""
    try:
        return harness.logged_examples_per_sec(stderr, after_step=100)
    except ValueError as error:
        sys.exit(f"{error}; the log ends:\n{stderr[-3000:]}")


def main(argv):
    del argv
    env = harness.child_env()
    alone = subprocess.run(command(tempfile.mkdtemp()), cwd=harness.ROOT, env=env, capture_output=True, text=True)
    one = examples_per_sec(alone.stderr)
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    model_dir = tempfile.mkdtemp()
    processes = []
    for task in ("chief", "worker"):
        config = json.dumps({"cluster": cluster, "task": {"type": task, "index": 0}})
        processes.append(subprocess.Popen(command(model_dir), cwd=harness.ROOT, env=dict(env, TF_CONFIG=config),
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    logs = [p.communicate()[1] for p in processes]
    two = 2 * examples_per_sec(logs[0])
    print(f"multiworker_throughput MNIST CNN, {FLAGS.batch_size} per host: 1 process {one:.1f} ex/s, "
          f"2 workers {two:.1f} ex/s (global), ratio {two / one:.2f}")


if __name__ == "__main__":
    app.run(main)
