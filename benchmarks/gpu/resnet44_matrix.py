"""ResNet-44 at batch 128 on the lent GPU: the towers x XLA x dtype matrix in one call, most wanted first.

    python benchmarks/gpu/resnet44_matrix.py [--budget_s=450] [--steps=290] [--warmup=20] [--out=DIR]

The device is lent for minutes, so the runs go in ORDER, most wanted
first, and none starts unless the budget still holds the longest run so
far: Keras 3 fit of the same network (XLA, its GPU default); cifar10.main
with one tower (variables on the card: the step compiles with XLA by
default); two logical towers on the card (`--split_gpu=2`) with each tower
compiled (`--jit_compile`) under both variable strategies, and without
XLA; evaluation and prediction throughput; in float32, bfloat16 and float16.
Every cifar10.main run has `--random_seed=1` (a second seed in the runs
named so) and trains the same synthetic batch, so one and two towers'
final losses are comparable, and the seeds show their spread.

Each run's examples/sec over the steps after `warmup` (both sides), its
final loss and wall seconds (and, for the profiled run, its TensorFlow
profiler trace, copied to OUT/trace_N.xplane.pb for TensorBoard's Profile
tab here) are appended to OUT/matrix.jsonl as it ends
and its log's tail to OUT/logs.txt, so a call cut off keeps what finished.
Prints the table last: ours against the same dtype's Keras figure of this
call, and two towers against one.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import harness  # noqa: E402
from absl import app, flags  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("budget_s", 450, "Seconds this script may take; a run that may not fit is skipped.")
flags.DEFINE_integer("steps", 290, "Measured training steps per run (after --warmup).")
flags.DEFINE_integer("warmup", 20, "Steps left out of each figure at the start (tracing, autotuning).")
flags.DEFINE_integer("num_layers", 44, "ResNet depth (smaller only to try this script on a CPU).")
flags.DEFINE_integer("batch_size", 128, "Global training batch.")
flags.DEFINE_string("out", os.environ.get("OUT", "/tmp/resnet44_matrix"), "Folder for matrix.jsonl and logs.txt.")

ONE_TOWER = ["--num_gpus=1", "--variable_strategy=GPU"]
TWO_TOWERS = ["--num_gpus=2", "--split_gpu=2"]
# name: cifar10.main's flags (None: Keras fit).
RUNS = {
    "keras fit": None,
    "1 tower": ONE_TOWER,
    "1 tower seed 2": ONE_TOWER + ["--random_seed=2"],
    "2 towers GPU xla": TWO_TOWERS + ["--variable_strategy=GPU", "--jit_compile"],
    "2 towers GPU xla seed 2": TWO_TOWERS + ["--variable_strategy=GPU", "--jit_compile", "--random_seed=2"],
    "2 towers CPU xla": TWO_TOWERS + ["--variable_strategy=CPU", "--jit_compile"],
    "2 towers GPU": TWO_TOWERS + ["--variable_strategy=GPU", "--nojit_compile"],
    "2 towers GPU profiled": TWO_TOWERS + ["--variable_strategy=GPU", "--profile_steps=200,209"],
}
# Most wanted first: the float32 ratios, evaluation and prediction, float16 and bfloat16 on one tower against
# Keras (the mixed-precision goal), two towers in bfloat16, a profile of ten two-tower steps (its trace comes back
# in OUT), the second seeds (the final losses' spread), the rest.
ORDER = [
    ("keras fit", "float32"),
    ("1 tower", "float32"),
    ("2 towers GPU xla", "float32"),
    ("eval 1 tower", "float32"),
    ("keras fit", "float16"),
    ("1 tower", "float16"),
    ("keras fit", "bfloat16"),
    ("1 tower", "bfloat16"),
    ("2 towers GPU xla", "bfloat16"),
    ("2 towers GPU profiled", "float32"),
    ("1 tower seed 2", "float32"),
    ("2 towers GPU xla seed 2", "float32"),
    ("2 towers CPU xla", "float32"),
    ("2 towers GPU xla", "float16"),
    ("2 towers GPU", "float32"),
]


def final_loss(log):
    found = re.findall(r"Loss for final step: (\S+)\.", log)
    return float(found[-1]) if found else None


def command_of(flags_, dtype):
    if flags_ is None:
        return [
            sys.executable,
            os.path.join(os.path.dirname(HERE), "cifar10_throughput.py"),
            "--keras_worker",
            f"--steps={FLAGS.steps}",
            f"--warmup={FLAGS.warmup}",
            f"--num_layers={FLAGS.num_layers}",
            f"--batch_size={FLAGS.batch_size}",
            f"--dtype={dtype}",
        ]
    job_dir = f"/tmp/matrix_job_{time.monotonic_ns()}"
    return [
        sys.executable,
        "-m",
        "cifar10.main",
        f"--job_dir={job_dir}",
        "--synthetic_data",
        f"--num_layers={FLAGS.num_layers}",
        f"--train_steps={FLAGS.warmup + FLAGS.steps}",
        f"--train_batch_size={FLAGS.batch_size}",
        "--eval_steps=1",
        "--save_checkpoints_steps=100000",
        "--random_seed=1",
        f"--dtype={dtype}",
        *flags_,
    ]


def keep_traces(command):
    """Copies the profiler traces a --profile_steps run wrote under its job dir into OUT (flat, so that they
    come back from the device); returns their names there."""
    job_dir = next((arg.split("=", 1)[1] for arg in command if arg.startswith("--job_dir=")), None)
    kept = []
    if job_dir is None:  # (Keras fit, the evaluation benchmark)
        return kept
    for path in glob.glob(os.path.join(job_dir, "plugins", "profile", "*", "*.xplane.pb")):
        kept.append(f"trace_{len(kept)}.xplane.pb")
        shutil.copy(path, os.path.join(FLAGS.out, kept[-1]))
    return kept


def eval_command():
    return [
        sys.executable,
        os.path.join(os.path.dirname(HERE), "cifar10_eval_throughput.py"),
        "--num_gpus=1",
        "--variable_strategy=GPU",
        f"--num_layers={FLAGS.num_layers}",
    ]


def measure(name, dtype, command, timeout):
    """One run's record: examples/sec (training runs), final loss, wall seconds, exit status."""
    start = time.monotonic()
    try:
        result = subprocess.run(
            command,
            cwd=harness.ROOT,
            env=harness.child_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out, err, status = result.stdout, result.stderr, result.returncode
    except subprocess.TimeoutExpired as stopped:
        out, err, status = stopped.stdout or "", stopped.stderr or "", "timeout"
        out, err = (text.decode() if isinstance(text, bytes) else text for text in (out, err))
    record = {
        "name": name,
        "dtype": dtype,
        "status": status,
        "wall_s": round(time.monotonic() - start, 1),
        "loss": final_loss(err),
    }
    if "EXAMPLES_PER_SEC " in out:
        record["ex_per_sec"] = float(out.split("EXAMPLES_PER_SEC ")[1].split()[0])
    elif "Average examples/sec" in err:
        try:
            record["ex_per_sec"] = harness.logged_examples_per_sec(err, FLAGS.warmup)
        except ValueError as error:
            record["error"] = str(error)
    if "cifar10_eval_throughput" in out:
        record["eval"] = [line for line in out.splitlines() if line.startswith("cifar10_eval")]
    record["traces"] = keep_traces(command)
    with open(os.path.join(FLAGS.out, "logs.txt"), "a") as logs:
        logs.write(f"==== {name} {dtype} {' '.join(command[1:])}\n{record}\n{out[-2000:]}\n{err[-6000:]}\n")
    with open(os.path.join(FLAGS.out, "matrix.jsonl"), "a") as matrix:
        matrix.write(json.dumps(record) + "\n")
    print(json.dumps(record), flush=True)
    return record


def plan():
    for name, dtype in ORDER:
        if name == "eval 1 tower":
            yield name, dtype, eval_command()
            continue
        yield name, dtype, command_of(RUNS[name], dtype)


def table(records):
    print(
        f"{'run':24s} {'dtype':9s} {'ex/s':>9s} {'vs keras':>9s} {'vs 1 tower':>10s} {'final loss':>11s} {'wall':>6s}"
    )
    for record in records:
        keras = next(
            (r.get("ex_per_sec") for r in records if r["name"] == "keras fit" and r["dtype"] == record["dtype"]), None
        )
        one = next(
            (r.get("ex_per_sec") for r in records if r["name"] == "1 tower" and r["dtype"] == record["dtype"]), None
        )
        rate = record.get("ex_per_sec")

        def ratio(base, rate=rate):
            return f"{rate / base:.2f}" if rate and base else "-"

        loss = "-" if record["loss"] is None else f"{record['loss']:.5g}"
        print(
            f"{record['name']:24s} {record['dtype']:9s} {rate or 0:9.1f} {ratio(keras):>9s} {ratio(one):>10s} "
            f"{loss:>11s} {record['wall_s']:6.0f}s {'' if record['status'] == 0 else record['status']}"
        )
        for line in record.get("eval", []):
            print("   ", line)


def main(argv):
    del argv
    os.makedirs(FLAGS.out, exist_ok=True)
    start, longest, records = time.monotonic(), 60.0, []
    for name, dtype, command in plan():
        left = FLAGS.budget_s - (time.monotonic() - start)
        if left < longest:
            print(f"skipped (budget: {left:.0f} s left, longest run {longest:.0f} s): {name} {dtype}", flush=True)
            continue
        records.append(measure(name, dtype, command, timeout=left))
        longest = max(longest, records[-1]["wall_s"])
    table(records)


if __name__ == "__main__":
    app.run(main)
