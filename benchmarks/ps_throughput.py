"""Parameter-server training throughput: one host, then 1 and 2 workers against 1 ps, the same model, this machine.

    python benchmarks/ps_throughput.py [--steps=600] [--warmup=100] [--batch_size=64]

Each layout runs this file's own small Estimator program (a 784-256-256-10
MLP on one synthetic batch, momentum SGD) as every task of a local cluster
on 127.0.0.1 ports (a chief, the workers, one ps; TF_CONFIG set per task,
as a user would), and reads the chief's examples/sec log over the steps
after `warmup`. One host runs the same program without TF_CONFIG. Prints
examples/sec of each and each against one host.

What the figures can say on a 2-core machine: every task is a process on
the same two cores, so a second worker adds contention, not hardware, and
each step's variables travel over loopback gRPC to the ps and back; they
measure the coordinator's and the transport's cost per step, not the
scaling a cluster of machines would show.
"""

import json
import os
import subprocess
import sys
import tempfile

import harness
import keras
import numpy as np
from absl import app, flags

import common
from common import hooks
from tests import free_ports

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 600, "Measured steps (after --warmup).")
flags.DEFINE_integer("warmup", 100, "Steps left out at the start (tracing, connecting).")
flags.DEFINE_integer("batch_size", 64, "Batch per step.")
flags.DEFINE_string("model_dir", None, "Internal: the task's model dir (set when this file runs as a task).")


def model_fn(features, labels, mode, params):
    net = common.get_module("net", lambda: keras.Sequential([
        keras.layers.Dense(256, activation="relu"), keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(10)]))
    logits = net(features)
    loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    return common.EstimatorSpec(mode, loss=loss, predictions=logits,
                                optimizer=common.get_optimizer(lambda: keras.optimizers.SGD(0.01, momentum=0.9)))


def task_main():
    """One task of the measured job (or the one host): trains warmup + steps and logs examples/sec."""
    rng = np.random.RandomState(0)
    images = rng.rand(FLAGS.batch_size, 784).astype(np.float32)
    labels = rng.randint(0, 10, FLAGS.batch_size).astype(np.int64)
    config = common.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=10**9, save_summary_steps=0,
                              log_step_count_steps=0, steps_per_loop=50, tf_random_seed=1)
    meter = hooks.ExamplesPerSecondHook(FLAGS.batch_size, every_n_steps=50)
    common.Estimator(model_fn, config=config).train(
        harness.synthetic_batch_input(images, labels), max_steps=FLAGS.warmup + FLAGS.steps, hooks=[meter])


def examples_per_sec(workers):
    """The chief's examples/sec with `workers` workers and one ps (0: one host, no TF_CONFIG)."""
    ports = iter(free_ports(2 + workers))
    cluster = {"chief": [f"127.0.0.1:{next(ports)}"], "worker": [f"127.0.0.1:{next(ports)}" for _ in range(workers)],
               "ps": [f"127.0.0.1:{next(ports)}"]}
    tasks = [("chief", 0)] + ([("worker", i) for i in range(workers)] + [("ps", 0)] if workers else [])
    model_dir = tempfile.mkdtemp(prefix="ps_bench_")
    started = []
    for task_type, index in tasks:
        env = harness.child_env()
        env.pop("TF_CONFIG", None)
        if workers:
            env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})
        started.append(subprocess.Popen(
            [sys.executable, __file__, f"--model_dir={model_dir}", f"--steps={FLAGS.steps}",
             f"--warmup={FLAGS.warmup}", f"--batch_size={FLAGS.batch_size}"],
            cwd=harness.ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    logs = [process.communicate(timeout=900) for process in started]
    for (task_type, index), process, (_, err) in zip(tasks, started, logs):
        if process.returncode:
            sys.exit(f"{task_type}:{index} failed ({process.returncode}):\n{err[-3000:]}")
    return harness.logged_examples_per_sec(logs[0][1], FLAGS.warmup)


def main(argv):
    del argv
    if FLAGS.model_dir:
        task_main()
        return
    rates = {workers: examples_per_sec(workers) for workers in (0, 1, 2)}
    for workers, rate in rates.items():
        layout = "one host" if not workers else f"{workers} worker(s) + 1 ps"
        print(f"ps_throughput {layout}: {rate:.1f} examples/sec, {rate / rates[0]:.2f}x one host "
              f"(MLP 784-256-256-10, batch {FLAGS.batch_size}, steps {FLAGS.warmup}-{FLAGS.warmup + FLAGS.steps}, "
              f"{os.cpu_count()} cores)", flush=True)


if __name__ == "__main__":
    app.run(main)
