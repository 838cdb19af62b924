"""How one unseeded conformance program's metric spreads here and on tf.estimator 2.15, from many runs a side.

A conformance program that sets no seed lands somewhere different on every run, on
tf.estimator too; one run outside its band says little. This runs
`../shared/conformance/run NAME` RUNS times a side, alternating (this project;
REFERENCE=1 with --reference_python, TF 2.15's program as it is), reads the
metric from each run.log, and prints the values, their medians, how many pass
the check's bound, and a two-sided Mann-Whitney U test (normal approximation)
of whether the two sides differ.

    python benchmarks/conformance_spread.py --name=tfet_regression \\
        --pattern="'average_loss': (?:np\\.float32\\()?([0-9.]+)" --bound=40 --runs=20 \\
        --reference_python=<a tensorflow-cpu==2.15.1 virtualenv's python>
"""

import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(os.path.dirname(ROOT), "shared", "conformance", "run")

flags.DEFINE_string("name", "tfet_regression", "The conformance program.")
flags.DEFINE_string("pattern", r"'average_loss': (?:np\.float32\()?([0-9.]+)", "Regex of the metric in run.log.")
flags.DEFINE_float("bound", 40.0, "The check's upper bound on the metric.")
flags.DEFINE_integer("runs", 20, "Runs a side.")
flags.DEFINE_string("reference_python", None, "A tensorflow-cpu==2.15.1 virtualenv's python (none: ours alone).")
FLAGS = flags.FLAGS


def one_run(python, reference):
    """The metric one run printed, or None when it printed none (a crash)."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PYTHON=python, CONFORMANCE_OUT=out, **({"REFERENCE": "1"} if reference else {}))
        subprocess.run([RUNNER, FLAGS.name], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        with open(os.path.join(out, FLAGS.name, "run.log"), encoding="utf-8", errors="replace") as log:
            found = re.search(FLAGS.pattern, log.read())
    return float(found.group(1)) if found else None


def mann_whitney_p(first, second):
    """Two-sided p of the U test, normal approximation (ties ranked by their order)."""
    ranks = np.concatenate([first, second]).argsort().argsort() + 1
    n, m = len(first), len(second)
    u = ranks[:n].sum() - n * (n + 1) / 2
    return math.erfc(abs(u - n * m / 2) / math.sqrt(n * m * (n + m + 1) / 12) / math.sqrt(2))


def main(argv):
    del argv
    sides = {"common": (sys.executable, False)}
    if FLAGS.reference_python:
        sides["tf.estimator 2.15"] = (FLAGS.reference_python, True)
    values = {side: [] for side in sides}
    for run in range(FLAGS.runs):
        for side, (python, reference) in sides.items():
            values[side].append(one_run(python, reference))
            print(f"run {run + 1} {side}: {values[side][-1]}", flush=True)
    for side, found in values.items():
        kept = np.array([v for v in found if v is not None])
        print(f"{side}: median {np.median(kept):.2f}, within bound {int((kept <= FLAGS.bound).sum())} of {len(found)} "
              f"(crashed {len(found) - len(kept)}), sorted {np.round(np.sort(kept), 1).tolist()}")
    if len(values) == 2:
        first, second = (np.array([v for v in found if v is not None]) for found in values.values())
        print(f"Mann-Whitney U, two-sided p = {mann_whitney_p(first, second):.3f}")


if __name__ == "__main__":
    app.run(main)
