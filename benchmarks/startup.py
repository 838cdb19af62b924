"""Start-up cost: seconds from Estimator.train() to the first training step, ours against tf.estimator 2.15.

    python benchmarks/startup.py [--conformance=../shared/conformance]
        [--reference_python=/path/to/tf215/venv/bin/python (default: $TF215_PYTHON)] [--rounds=3]
        [--programs=bert,census,cifar10]

Programs: the conformance suite's `bert` and `census` (its README: real
tf.estimator programs; ours: after `python -m common.upgrade`, the TF 2.15
reference: as they are, under --reference_python), each with its synthetic
data and the runner's command line; and `cifar10` (`python -m cifar10.main`,
--synthetic_data, ResNet-8, 20 steps: ours only, as the official
cifar10_estimator it stands for needs tf.contrib and has no TF 2.15 version).
Upgrades and data are made once per side, outside the timing; each run gets
a fresh model dir. The sides alternate, one run each per round.

Each run goes through benchmarks/startup_driver.py, which runs the program
unchanged (as `python SCRIPT` or `python -m MODULE` would) and marks on
stderr, with the time, when the outermost Estimator.train/evaluate/predict/
export call begins and ends, when a phase's first step returns, and each
call of model_fn; the program's own lines are time-stamped as they arrive.
Figures (medians over the rounds):
  first step: train() called -> the first step done (the driver's mark, or
              the first "loss = ..., step = N" line if that comes earlier);
  wall, cpu:  the whole process (cpu: user + system, all threads: less
              sensitive than wall to other load on the machine);
  eval, export: evaluate() -> its first batch done; export_saved_model() whole;
  model_fn:   calls per phase (train/eval/predict/export; tf.estimator builds
              one graph per phase, this project traces model_fn more than once).
Prints the load average with each run: compare sides only within a table.
Nothing is downloaded; run logs stay under --work_dir (default: a new temp dir).
"""

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(ROOT, "benchmarks", "startup_driver.py")

FLAGS = flags.FLAGS
flags.DEFINE_string("conformance", "../shared/conformance",
                    "The conformance folder (programs/, data.py); relative: to the working directory, else to "
                    "the project root.")
flags.DEFINE_string("reference_python", os.environ.get("TF215_PYTHON"),
                    "Python of a tensorflow-cpu==2.15.1 virtualenv (tf.estimator): the reference side; "
                    "none: ours only.")
flags.DEFINE_integer("rounds", 3, "Runs of each program per side (alternating).", lower_bound=1)
flags.DEFINE_list("programs", ["bert", "census", "cifar10"], "Which of bert, census, cifar10.")
flags.DEFINE_string("python", sys.executable, "The project's Python (ours).")
flags.DEFINE_string("work_dir", None, "Where programs, data and run logs go (default: a new temp dir, kept).")
flags.DEFINE_integer("timeout", 900, "Seconds one run may take.", lower_bound=1)

PROGRAMS = ("bert", "census", "cifar10")
PHASES = (("train", "train"), ("evaluate", "eval"), ("predict", "predict"), ("export_saved_model", "export"))
LOSS_LINE = re.compile(r"loss = [-+0-9.eEnainf]+, step = \d+")
MARK = re.compile(r"STARTUP_MARK (\d+\.\d+) (\w+) ?(.*)")


def _conformance_dir():
    path = FLAGS.conformance
    if not os.path.isabs(path) and not os.path.isdir(path):
        path = os.path.join(ROOT, path)
    path = os.path.abspath(path)
    if not os.path.isfile(os.path.join(path, "data.py")):
        raise app.UsageError(f"--conformance={FLAGS.conformance}: no data.py in {path}")
    return path


def _check(cmd, log, **kwargs):
    with open(log, "w") as out:
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs).returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed: see {log}")


class Program:
    """One program on one side: made once (upgrade or copy, data), run many times."""

    def __init__(self, name, side, python, conformance, work):
        self.name, self.side, self.python = name, side, python
        self.dir = os.path.join(work, f"{name}_{side}")
        self.runs = 0
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
                        PYTHONUNBUFFERED="1")
        self.env.pop("STARTUP_DETAIL", None)
        self.env.pop("STARTUP_PROFILE_DIR", None)
        if side == "ours":
            self.env["PYTHONPATH"] = ROOT + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH")
                                             else "")
        if name == "cifar10":
            self.cwd, self.entry = ROOT, ["-m", "cifar10.main"]
            self.args = lambda model_dir: [
                "--synthetic_data", f"--job_dir={model_dir}", "--num_layers=8", "--train_steps=20",
                "--train_batch_size=8", "--eval_batch_size=8", "--eval_steps=2", "--random_seed=1"]
            return
        programs, data = os.path.join(conformance, "programs"), os.path.join(self.dir, "data")
        os.makedirs(data)
        if name == "bert":
            src = os.path.join(self.dir, "src")
            os.makedirs(src)
            for file in os.listdir(os.path.join(programs, "bert")):
                if file.endswith(".py"):
                    shutil.copy(os.path.join(programs, "bert", file), src)
            prog = os.path.join(self.dir, "prog", "bert")
            self.cwd, self.entry = prog, ["run_classifier.py"]
            self.args = lambda model_dir: [
                "--task_name=MRPC", "--do_train=true", "--do_eval=true", "--do_predict=true", f"--data_dir={data}",
                f"--vocab_file={data}/vocab.txt", f"--bert_config_file={data}/bert_config.json",
                "--max_seq_length=32", "--train_batch_size=8", "--eval_batch_size=8", "--predict_batch_size=8",
                "--learning_rate=1e-3", "--num_train_epochs=3.0", f"--output_dir={model_dir}"]
            data_kind = "mrpc"
        else:
            src = os.path.join(programs, "census_custom", "trainer")
            prog = os.path.join(self.dir, "prog", "trainer")
            self.cwd, self.entry = os.path.dirname(prog), ["-m", "trainer.task"]
            self.args = lambda model_dir: [
                f"--train-files={data}/adult.data.csv", f"--eval-files={data}/adult.test.csv",
                f"--job-dir={model_dir}", "--train-steps=1000", "--eval-steps=100"]
            data_kind = "census"
        if side == "ours":
            _check([python, "-m", "common.upgrade", f"--intree={src}", f"--outtree={prog}",
                    f"--reportfile={self.dir}/upgrade_report.txt"], os.path.join(self.dir, "upgrade.log"),
                   cwd=ROOT, env=self.env)
        else:
            shutil.copytree(src, prog)
        _check([python, os.path.join(conformance, "data.py"), data_kind, data], os.path.join(self.dir, "data.log"),
               env=self.env)

    def run(self):
        """One run: its figures (a dict), or raises RuntimeError naming its log."""
        self.runs += 1
        model_dir = os.path.join(self.dir, f"model_{self.runs}")
        log = os.path.join(self.dir, f"run_{self.runs}.log")
        shutil.rmtree(model_dir, ignore_errors=True)
        cmd = [self.python, DRIVER, *self.entry, *self.args(model_dir)]
        lines = []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.time()
        proc = subprocess.Popen(cmd, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", bufsize=1)
        timer = threading.Timer(FLAGS.timeout, proc.kill)
        timer.start()
        for line in proc.stdout:  # each line stamped as it arrives
            lines.append((time.time(), line.rstrip("\n")))
        code = proc.wait()
        timer.cancel()
        wall = time.time() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(log, "w") as out:
            out.write(f"# {' '.join(cmd)}\n# cwd {self.cwd}\n")
            out.writelines(f"{stamp:.3f} {line}\n" for stamp, line in lines)
        shutil.rmtree(model_dir, ignore_errors=True)
        if code:
            raise RuntimeError(f"{self.name} ({self.side}) exited {code}: see {log}")
        figures = parse(lines)
        figures.update(wall=wall, cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                       load=os.getloadavg()[0], log=log)
        return figures


def parse(lines):
    """The figures of one run's time-stamped lines (see the module's doc)."""
    marks = []  # (time, event, detail)
    for stamp, line in lines:
        match = MARK.search(line)
        if match:
            marks.append((float(match.group(1)), match.group(2), match.group(3)))
        elif LOSS_LINE.search(line):
            marks.append((stamp, "loss_line", ""))
    figures = {}
    begins = {detail: t for t, event, detail in marks if event == "phase_begin"}
    ends = {detail: t for t, event, detail in marks if event == "phase_end"}
    firsts = {detail: t for t, event, detail in marks if event == "first_run"}
    first_of = {}
    for detail in begins:  # the first instance of each phase ("train#1")
        first_of.setdefault(detail.split("#")[0], detail)
    train = first_of.get("train")
    if train:
        losses = [t for t, event, _ in marks if event == "loss_line" and t >= begins[train]]
        done = ([firsts[train]] if train in firsts else []) + losses[:1]
        if done:
            figures["first_step"] = min(done) - begins[train]
    evaluate = first_of.get("evaluate")
    if evaluate in firsts:
        figures["eval_first"] = firsts[evaluate] - begins[evaluate]
    export = first_of.get("export_saved_model")
    if export in ends:
        figures["export"] = ends[export] - begins[export]
    counts = {}
    for _, event, detail in marks:
        if event == "model_fn":
            phase = detail.split("#")[0]
            counts[phase] = counts.get(phase, 0) + 1
    figures["model_fn"] = "/".join(str(counts.get(phase, 0)) for phase, _ in PHASES)
    return figures


def _median(values):
    return f"{statistics.median(values):.2f}" if values else "-"


def table(results, sides):
    header = (f"{'program':<9} {'side':<10} {'first step s':>12} {'wall s':>7} {'cpu s':>7} {'eval 1st s':>10} "
              f"{'export s':>8}  {'model_fn t/e/p/x':<17} runs  load")
    print(header)
    print("-" * len(header))
    for name in FLAGS.programs:
        for side in sides:
            runs = results.get((name, side))
            if runs is None:
                continue
            if isinstance(runs, str):
                print(f"{name:<9} {side:<10} {runs}")
                continue
            ok = [r for r in runs if isinstance(r, dict)]
            if not ok:
                print(f"{name:<9} {side:<10} FAILED: {runs[-1]}")
                continue

            def column(key, runs=ok):
                return _median([r[key] for r in runs if key in r])
            counts = sorted({r["model_fn"] for r in ok})
            print(f"{name:<9} {side:<10} {column('first_step'):>12} {column('wall'):>7} {column('cpu'):>7} "
                  f"{column('eval_first'):>10} {column('export'):>8}  {','.join(counts):<17} {len(ok):>4}  "
                  f"{', '.join('%.1f' % r['load'] for r in ok)}")
    print("first step: Estimator.train() called -> first step done; eval 1st: evaluate() -> first batch done; "
          "export: export_saved_model() whole; model_fn: calls in train/eval/predict/export; load: 1-min load "
          "average after each run")


def main(argv):
    del argv
    unknown = set(FLAGS.programs) - set(PROGRAMS)
    if unknown:
        raise app.UsageError(f"--programs: unknown {sorted(unknown)} (known: {', '.join(PROGRAMS)})")
    conformance = _conformance_dir() if set(FLAGS.programs) & {"bert", "census"} else None
    work = FLAGS.work_dir or tempfile.mkdtemp(prefix="startup_bench_")
    os.makedirs(work, exist_ok=True)
    sides = {"ours": FLAGS.python}
    if FLAGS.reference_python:
        sides["tf2.15"] = FLAGS.reference_python
    print(f"startup: {', '.join(FLAGS.programs)}; sides: {', '.join(f'{s} ({p})' for s, p in sides.items())}; "
          f"{FLAGS.rounds} round(s); logs under {work}", flush=True)
    results, programs = {}, {}
    for name in FLAGS.programs:
        for side, python in sides.items():
            if name == "cifar10" and side != "ours":
                results[(name, side)] = ("skipped: the official cifar10_estimator needs tf.contrib (TF 1.x); "
                                         "no TF 2.15 version to run")
                continue
            try:
                programs[(name, side)] = Program(name, side, python, conformance, work)
                results[(name, side)] = []
            except RuntimeError as error:
                results[(name, side)] = f"FAILED to prepare: {error}"
    for round_ in range(FLAGS.rounds):
        for name in FLAGS.programs:
            for side in sides:
                program = programs.get((name, side))
                if program is None:
                    continue
                try:
                    figures = program.run()
                    results[(name, side)].append(figures)
                    first = figures.get("first_step", float("nan"))
                    print(f"round {round_ + 1} {name} {side}: first step {first:.2f} s, "
                          f"wall {figures['wall']:.2f} s, cpu {figures['cpu']:.2f} s, model_fn {figures['model_fn']}, "
                          f"load {figures['load']:.1f}", flush=True)
                except RuntimeError as error:
                    results[(name, side)].append(str(error))
                    print(f"round {round_ + 1} {name} {side}: {error}", flush=True)
    print()
    table(results, list(sides))


if __name__ == "__main__":
    app.run(main)
