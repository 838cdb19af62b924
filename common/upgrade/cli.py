"""Rewrites a tf.estimator program to run on this project, as tf_upgrade_v2 rewrote TF1 code.

    python -m common.upgrade --infile=old.py --outfile=new.py
    python -m common.upgrade --intree=old/ --outtree=new/
    python -m common.upgrade --check_model_dir=DIR    (what a model dir holds; nothing is written)

(`pip install` of this project installs the same as the command `estimator-upgrade`.)

It takes programs from before or after tf_upgrade_v2. Each change, and
each construct it cannot convert (with its line and what to use instead),
is printed and written to --reportfile. What the rules are is
common.upgrade.rules'; how files are read and written, common.upgrade.files'.
A file it cannot read, parse or write is named in the report and skipped
(with --intree, the rest of the tree goes on).

Exit status: 0 when everything was converted; EXIT_LEFT_TO_CONVERT (3) when
the files were written but constructs are left to convert by hand (marked
ERROR in the report; the last line says how many); 1 when a file was not
upgraded or copied, the report could not be written, or the flags were
wrong.
"""

import dataclasses
import os
import sys
from typing import Optional

from absl import app, flags

from common.upgrade import files, own_common
from common.upgrade import rules as upgrade_rules

FLAGS = flags.FLAGS
flags.DEFINE_string("infile", None, "The Python file to upgrade.")
flags.DEFINE_string("outfile", None, "Where the upgraded file goes (may be --infile itself).")
flags.DEFINE_string("intree", None, "A directory whose Python files are upgraded.")
flags.DEFINE_string("outtree", None, "Where the upgraded tree goes (may be --intree itself).")
flags.DEFINE_string("check_model_dir", None, "Says whose checkpoints a model dir holds and how this project "
                    "reads and writes them (common.upgrade.model_dir_check); upgrades nothing.")
flags.DEFINE_bool("copyotherfiles", True, "With --intree: copy the files that are not Python too.")
flags.DEFINE_string("reportfile", "report.txt", "Where the list of changes is written ('' for none); an existing "
                    "file that is not such a report is never overwritten.")

REPORT_HEADER = "# python -m common.upgrade report"
EXIT_LEFT_TO_CONVERT = 3  # the files were written, with constructs left to convert by hand


@dataclasses.dataclass(frozen=True)
class Task:
    """One thing the command does to one file: upgrade it, copy it, or (skip set) say why it cannot."""

    source: str
    target: Optional[str]
    upgrade: bool
    skip: str = ""
    link: str = ""  # a symlink to a directory of the tree: what it points to, made again at target


def tf1_files(tasks):
    """The Python files of the tree written against TF1's API: one makes the whole program TF1's (its premade
    estimators TF1's, summing the loss), as a TF1 program split over a package was TF1's in every file."""
    found = []
    for task in tasks:
        if not task.upgrade or task.skip:
            continue
        try:
            if upgrade_rules.is_tf1_source(files.read_source(task.source).text):
                found.append(task.source)
        except (files.FileProblem, SyntaxError, ValueError, upgrade_rules.tokenize.TokenError):
            continue  # (reported when the file itself is upgraded)
    return found


def upgrade_file(task, in_tree, tf1_tree=False, own_common_renamed=False, tree_packages=()):
    """(report lines, refused constructs, whether the file failed) for one Python file; own_common_renamed: the
    tree's own module `common` is written as program_common (common.upgrade.own_common); tree_packages: the
    top-level packages of the tree (see upgrade_rules.upgrade_source)."""
    try:
        source = files.read_source(task.source)
        try:
            text, renaming = own_common.rename_imports(source.text) if own_common_renamed else (source.text, [])
            new_text, changes = upgrade_rules.upgrade_source(text, tf1_tree, tree_packages)
            changes = renaming + changes
        except (SyntaxError, ValueError, upgrade_rules.tokenize.TokenError) as error:
            why = error if isinstance(error, upgrade_rules.NotRewritable) else f"not valid Python ({error})"
            kept = ""
            if in_tree and task.target != task.source:
                files.copy_file(task.source, task.target)
                kept = f", copied unchanged to {task.target}"
            return [f"{task.source}: ERROR: {why}: not upgraded{kept}"], 0, True
        files.write_source(task.target, new_text, task.source, source.encoding)
    except files.FileProblem as problem:
        return [f"ERROR: {problem}: not upgraded"], 0, True
    return [change.describe(task.source) for change in changes], sum(change.refused for change in changes), False


def _tree_packages(intree):
    """The names a program of the tree imports its own top-level packages by: the tree's folder's, its folders'."""
    names = {os.path.basename(os.path.realpath(intree))}
    return names | {name for name in os.listdir(intree) if os.path.isdir(os.path.join(intree, name))}


def _make_link(task):
    """Makes task.target the symlink task.source is (to a directory of the tree); returns the report line."""
    if os.path.lexists(task.target):
        return f"{task.source}: kept {task.target}, which is there already (the symlink is to {task.link})"
    try:
        os.makedirs(os.path.dirname(task.target), exist_ok=True)
        os.symlink(task.link, task.target)
    except OSError as error:
        return f"ERROR: {task.target}: cannot be made the symlink to {task.link}: {error.strerror or error}"
    return f"{task.source}: made {task.target} the same symlink to a directory of the tree ({task.link})"


def _tree_tasks(intree, outtree, copy_other):
    problems = []
    for root, dirs, names in os.walk(intree, onerror=problems.append):
        for error in problems:
            yield Task(error.filename or root, None, False, f"cannot be listed: {error.strerror or error}")
        problems.clear()
        for name in sorted(dirs):
            path = os.path.join(root, name)
            if not os.path.islink(path):
                continue
            link = os.readlink(path)  # (one into the tree: its directory is upgraded where it is; the link is made)
            if not os.path.isabs(link) and os.path.realpath(path).startswith(os.path.realpath(intree) + os.sep):
                yield Task(path, os.path.join(outtree, os.path.relpath(path, intree)), False, link=link)
            else:
                yield Task(path, None, False, "a symlink to a directory outside the tree, or by an absolute path: "
                                              "not followed")
        for name in sorted(names):
            source = os.path.join(root, name)
            target = os.path.join(outtree, os.path.relpath(source, intree))
            if name.endswith(".py"):
                yield Task(source, target, True)
            elif copy_other and os.path.realpath(source) != os.path.realpath(target):
                yield Task(source, target, False)


def _tasks():
    if FLAGS.infile and FLAGS.outfile and not (FLAGS.intree or FLAGS.outtree):
        if not os.path.isfile(FLAGS.infile):
            raise app.UsageError(f"--infile={FLAGS.infile}: no such file")
        if os.path.isdir(FLAGS.outfile):
            raise app.UsageError(f"--outfile={FLAGS.outfile} is a directory")
        return [Task(FLAGS.infile, FLAGS.outfile, True)], False, False
    if FLAGS.intree and FLAGS.outtree and not (FLAGS.infile or FLAGS.outfile):
        if not os.path.isdir(FLAGS.intree):
            raise app.UsageError(f"--intree={FLAGS.intree}: no such directory")
        if os.path.realpath(FLAGS.outtree).startswith(os.path.realpath(FLAGS.intree) + os.sep):
            raise app.UsageError(f"--outtree={FLAGS.outtree} is inside --intree={FLAGS.intree}")
        tasks = list(_tree_tasks(FLAGS.intree, FLAGS.outtree, FLAGS.copyotherfiles))
        relative = {task.source: os.path.relpath(task.source, FLAGS.intree) for task in tasks if task.target}
        if not own_common.tree_holds_own(relative.values()):
            return tasks, True, False
        return [dataclasses.replace(task, target=os.path.join(FLAGS.outtree, own_common.renamed_path(
            relative[task.source]))) if task.target else task for task in tasks], True, True
    raise app.UsageError("give --infile and --outfile, or --intree and --outtree")


def _check_report_path(report, tasks):
    """Refuses, before anything is written, a report that would overwrite a source, a target or a user's file."""
    if not report:
        return
    where = os.path.realpath(report)
    for task in tasks:
        for role, path in (("an input", task.source), ("an output", task.target)):
            if path and os.path.realpath(path) == where:
                raise app.UsageError(f"--reportfile={report} is {role} of this upgrade ({path}): give another one")
    if os.path.isdir(report):
        raise app.UsageError(f"--reportfile={report} is a directory")
    if os.path.exists(report):
        try:
            with open(report, encoding="utf-8", errors="replace") as f:
                first = f.readline().rstrip("\n")
        except OSError as error:
            raise app.UsageError(f"--reportfile={report} cannot be read: {error.strerror}") from error
        if first != REPORT_HEADER:
            raise app.UsageError(f"--reportfile={report} exists and is not a report of this command: not "
                                 "overwritten; give another --reportfile ('' for none)")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    if FLAGS.check_model_dir:
        if FLAGS.infile or FLAGS.outfile or FLAGS.intree or FLAGS.outtree:
            raise app.UsageError("--check_model_dir upgrades nothing: give it alone")
        if not os.path.isdir(FLAGS.check_model_dir):
            raise app.UsageError(f"--check_model_dir={FLAGS.check_model_dir}: no such directory")
        from common.upgrade import model_dir_check  # (it reads checkpoints: TensorFlow loads only for this)
        print("\n".join(model_dir_check.report(FLAGS.check_model_dir)))
        return 0
    tasks, in_tree, renamed = _tasks()
    _check_report_path(FLAGS.reportfile, tasks)
    report, refused, upgraded, failed = [], 0, 0, 0
    if renamed:
        report.append(f"The tree holds its own module {own_common.OWN}, written as {own_common.RENAMED} with the "
                      f"imports of it: this project's package is {own_common.OWN}" + (
                          f" (upgraded in place: remove its old {own_common.OWN} from {FLAGS.outtree})"
                          if os.path.realpath(FLAGS.outtree) == os.path.realpath(FLAGS.intree) else ""))
    deciding = tf1_files(tasks) if in_tree else []
    packages = _tree_packages(FLAGS.intree) if in_tree else ()
    if deciding:
        report.append(f"The tree is a TF1 program (its TF1 names, in {', '.join(deciding)}): every file's "
                      "tf.estimator names are read as TF1's")
    for task in tasks:
        if task.skip:
            report.append(f"ERROR: {task.source}: {task.skip}: skipped")
            failed += 1
        elif task.link:
            report.append(_make_link(task))
            failed += report[-1].startswith("ERROR")
        elif task.upgrade:
            lines, file_refused, file_failed = upgrade_file(task, in_tree, bool(deciding), renamed, packages)
            report.extend(lines)
            refused += file_refused
            failed += file_failed
            upgraded += not file_failed
        else:
            try:
                files.copy_file(task.source, task.target)
            except files.FileProblem as problem:
                report.append(f"ERROR: {problem}: not copied")
                failed += 1
    changes = len(report) - refused - failed - bool(deciding) - renamed
    report.append(f"Upgraded {upgraded} file(s): {changes} change(s), {refused} construct(s) left for you to "
                  f"convert (marked ERROR)" + (f"; {failed} file(s) not upgraded or copied (marked ERROR)."
                                               if failed else "."))
    print("\n".join(report))
    if FLAGS.reportfile:
        try:
            files.write_text(FLAGS.reportfile, "\n".join([REPORT_HEADER] + report) + "\n")
        except files.FileProblem as problem:
            print(f"ERROR: the report was not written: {problem}", file=sys.stderr)
            return 1
        print(f"Report written to {FLAGS.reportfile}", file=sys.stderr)
    if failed:
        return 1
    if refused:
        print(f"{refused} construct{'s' if refused != 1 else ''} left to convert (see "
              f"{FLAGS.reportfile or 'the report above'})", file=sys.stderr)
        return EXIT_LEFT_TO_CONVERT
    return 0
