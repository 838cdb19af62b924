"""python -m common.upgrade as a command: files and trees, other files copied, the report."""

import subprocess
import sys

from tests import ROOT


def test_the_command_upgrades_a_tree_copies_other_files_and_writes_the_report(tmp_path):
    tree = tmp_path / "old"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "train.py").write_text("import tensorflow as tf\nspec = tf.estimator.EstimatorSpec\n"
                                           "bad = tf.contrib.x\n")
    (tree / "README").write_text("notes\n")
    (tree / "broken.py").write_text("def (:\n")
    report = tmp_path / "report.txt"
    result = subprocess.run([sys.executable, "-m", "common.upgrade", f"--intree={tree}",
                             f"--outtree={tmp_path / 'new'}", f"--reportfile={report}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "pkg" / "train.py").read_text() == (
        "import common\nimport tensorflow as tf\nspec = common.EstimatorSpec\nbad = tf.contrib.x\n")
    assert (tmp_path / "new" / "README").read_text() == "notes\n"
    assert not (tmp_path / "new" / "broken.py").exists()
    lines = report.read_text().splitlines()
    assert f"{tree / 'pkg' / 'train.py'}:3:7: ERROR: tf.contrib.x: tf.contrib is gone" in "\n".join(lines)
    assert any(line.startswith(f"{tree / 'broken.py'}: ERROR: not valid Python, left unchanged") for line in lines)
    assert lines[-1] == "Upgraded 2 file(s): 2 change(s), 2 construct(s) left for you to convert (marked ERROR)."
    assert result.stdout.splitlines()[-1] == lines[-1]

    refused = subprocess.run([sys.executable, "-m", "common.upgrade", f"--infile={tree / 'missing.py'}",
                              f"--outfile={tmp_path / 'x.py'}"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode != 0 and "--infile=" in refused.stderr and "no such file" in refused.stderr
