"""Rewrites a tf.estimator program to run on this project, as tf_upgrade_v2 rewrote TF1 code.

    python -m common.upgrade --infile=old.py --outfile=new.py
    python -m common.upgrade --intree=old/ --outtree=new/

It takes programs from before or after tf_upgrade_v2. Each change, and
each construct it cannot convert (with its line and what to use instead),
is printed and written to --reportfile. What the rules are is
common.upgrade_rules'.
"""

import os
import shutil
import sys

from absl import app, flags

from common.upgrade import rules as upgrade_rules

FLAGS = flags.FLAGS
flags.DEFINE_string("infile", None, "The Python file to upgrade.")
flags.DEFINE_string("outfile", None, "Where the upgraded file goes (may be --infile itself).")
flags.DEFINE_string("intree", None, "A directory whose Python files are upgraded.")
flags.DEFINE_string("outtree", None, "Where the upgraded tree goes.")
flags.DEFINE_bool("copyotherfiles", True, "With --intree: copy the files that are not Python too.")
flags.DEFINE_string("reportfile", "report.txt", "Where the list of changes is written ('' for none).")


def upgrade_file(in_path, out_path):
    """Upgrades one file; returns its report lines and how many constructs it refused."""
    with open(in_path, encoding="utf-8") as f:
        source = f.read()
    try:
        new_source, changes = upgrade_rules.upgrade_source(source)
    except (SyntaxError, upgrade_rules.tokenize.TokenError) as error:
        return [f"{in_path}: ERROR: not valid Python, left unchanged: {error}"], 1
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(new_source)
    return [change.describe(in_path) for change in changes], sum(change.refused for change in changes)


def _tree_pairs(intree, outtree, copy_other):
    for root, _, files in os.walk(intree):
        for name in sorted(files):
            source = os.path.join(root, name)
            target = os.path.join(outtree, os.path.relpath(source, intree))
            if name.endswith(".py"):
                yield source, target
            elif copy_other:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(source, target)


def _pairs():
    if FLAGS.infile and FLAGS.outfile and not (FLAGS.intree or FLAGS.outtree):
        if not os.path.isfile(FLAGS.infile):
            raise app.UsageError(f"--infile={FLAGS.infile}: no such file")
        return [(FLAGS.infile, FLAGS.outfile)]
    if FLAGS.intree and FLAGS.outtree and not (FLAGS.infile or FLAGS.outfile):
        if not os.path.isdir(FLAGS.intree):
            raise app.UsageError(f"--intree={FLAGS.intree}: no such directory")
        if os.path.abspath(FLAGS.outtree).startswith(os.path.abspath(FLAGS.intree) + os.sep):
            raise app.UsageError(f"--outtree={FLAGS.outtree} is inside --intree={FLAGS.intree}")
        return list(_tree_pairs(FLAGS.intree, FLAGS.outtree, FLAGS.copyotherfiles))
    raise app.UsageError("give --infile and --outfile, or --intree and --outtree")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    report, refused, count = [], 0, 0
    for in_path, out_path in _pairs():
        lines, file_refused = upgrade_file(in_path, out_path)
        report.extend(lines)
        refused += file_refused
        count += 1
    summary = (f"Upgraded {count} file(s): {len(report) - refused} change(s), "
               f"{refused} construct(s) left for you to convert (marked ERROR).")
    report.append(summary)
    print("\n".join(report))
    if FLAGS.reportfile:
        with open(FLAGS.reportfile, "w", encoding="utf-8") as f:
            f.write("\n".join(report) + "\n")
        print(f"Report written to {FLAGS.reportfile}", file=sys.stderr)

