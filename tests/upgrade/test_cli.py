"""python -m common.upgrade as a command, run as a user runs it: files and trees, other files copied, the
report, and nothing of the user's lost: odd bytes kept, collisions refused, bad files named and skipped."""

import os
import shutil

from tests import ROOT
from tests.upgrade import upgrade_command as _upgrade


def test_the_command_upgrades_a_tree_copies_other_files_and_writes_the_report(tmp_path):
    tree = tmp_path / "old"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "train.py").write_text("import tensorflow as tf\nspec = tf.estimator.EstimatorSpec\n"
                                           "bad = tf.contrib.x\n")
    (tree / "README").write_text("notes\n")
    (tree / "broken.py").write_text("def (:\n")
    report = tmp_path / "report.txt"
    result = _upgrade(f"--intree={tree}", f"--outtree={tmp_path / 'new'}", f"--reportfile={report}")
    assert result.returncode == 1, result.stderr  # one file could not be upgraded
    assert (tmp_path / "new" / "pkg" / "train.py").read_text() == (
        "import common\nimport tensorflow as tf\nspec = common.EstimatorSpec\nbad = tf.contrib.x\n")
    assert (tmp_path / "new" / "README").read_text() == "notes\n"
    assert (tmp_path / "new" / "broken.py").read_text() == "def (:\n"  # the tree stays whole
    lines = report.read_text().splitlines()
    assert lines[0] == "# python -m common.upgrade report"
    assert f"{tree / 'pkg' / 'train.py'}:3:7: ERROR: tf.contrib.x: tf.contrib is gone" in "\n".join(lines)
    assert f"{tree / 'broken.py'}: ERROR: not valid Python (invalid syntax (<unknown>, line 1)): not upgraded, " \
           f"copied unchanged to {tmp_path / 'new' / 'broken.py'}" in lines
    assert lines[-1] == ("Upgraded 1 file(s): 2 change(s), 1 construct(s) left for you to convert (marked ERROR); "
                         "1 file(s) not upgraded or copied (marked ERROR).")
    assert result.stdout.splitlines()[-1] == lines[-1]

    refused = _upgrade(f"--infile={tree / 'missing.py'}", f"--outfile={tmp_path / 'x.py'}")
    assert refused.returncode != 0 and "--infile=" in refused.stderr and "no such file" in refused.stderr


def test_constructs_left_to_convert_give_status_3_and_a_last_line_that_counts_them(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("import tensorflow as tf\nspec = tf.estimator.EstimatorSpec\nbad = tf.contrib.x\n"
                       "worse = tf.contrib.y\n")
    report = tmp_path / "r.txt"
    result = _upgrade(f"--infile={program}", f"--outfile={tmp_path / 'out.py'}", f"--reportfile={report}")
    assert result.returncode == 3, result.stderr  # (common.upgrade.cli.EXIT_LEFT_TO_CONVERT)
    assert result.stderr.splitlines()[-1] == f"2 constructs left to convert (see {report})"
    assert (tmp_path / "out.py").read_text().startswith("import common\n")  # the file was still written
    assert report.read_text().count(": ERROR: tf.contrib.") == 2

    program.write_text("import tensorflow as tf\nbad = tf.contrib.x\n")
    alone = _upgrade(f"--infile={program}", f"--outfile={tmp_path / 'out.py'}", "--reportfile=")
    assert alone.returncode == 3 and alone.stderr.splitlines()[-1] == \
        "1 construct left to convert (see the report above)"


def test_in_place_the_bytes_it_does_not_rewrite_stay_as_they_were(tmp_path):
    """A BOM, CRLF, a form feed, U+2028 and a latin-1 file: only the rewritten name and the import change."""
    program = tmp_path / "p.py"
    program.write_bytes("\ufeffimport tensorflow as tf\r\n\x0c\r\ns = 'a\u2028b'  # \x85\r\n"
                        "est = tf.estimator.Estimator(fn)\r\n".encode("utf-8"))
    result = _upgrade(f"--infile={program}", f"--outfile={program}", "--reportfile=", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert program.read_bytes() == ("\ufeffimport common\r\nimport tensorflow as tf\r\n\x0c\r\ns = 'a\u2028b'  # "
                                    "\x85\r\nest = common.Estimator(fn)\r\n").encode("utf-8")
    assert os.listdir(tmp_path) == ["p.py"]  # no report.txt with --reportfile=, no temp file

    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\nimport tensorflow as tf\nname = 'caf\xe9'\n"
                      "spec = tf.estimator.EstimatorSpec\n".encode("latin-1"))
    assert _upgrade(f"--infile={latin}", f"--outfile={latin}", "--reportfile=").returncode == 0
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\nimport common\nimport tensorflow as tf\n"
                                  "name = 'caf\xe9'\nspec = common.EstimatorSpec\n").encode("latin-1")


def test_a_report_path_that_would_overwrite_a_file_of_the_users_is_refused_before_anything_is_written(tmp_path):
    program = tmp_path / "p.py"
    source = "import tensorflow as tf\nest = tf.estimator.Estimator\n"
    program.write_text(source)
    for report in (program, tmp_path / "out.py"):
        result = _upgrade(f"--infile={program}", f"--outfile={tmp_path / 'out.py'}", f"--reportfile={report}")
        assert result.returncode != 0 and f"--reportfile={report} is an" in result.stderr
    (tmp_path / "report.txt").write_text("my own notes\n")
    result = _upgrade(f"--infile={program}", f"--outfile={tmp_path / 'out.py'}", cwd=tmp_path)  # default report
    assert result.returncode != 0
    assert "--reportfile=report.txt exists and is not a report of this command: not overwritten" in result.stderr
    assert (tmp_path / "report.txt").read_text() == "my own notes\n" and program.read_text() == source
    assert sorted(os.listdir(tmp_path)) == ["p.py", "report.txt"]

    (tmp_path / "report.txt").unlink()  # its own report it replaces
    for _ in range(2):
        assert _upgrade(f"--infile={program}", f"--outfile={tmp_path / 'out.py'}", cwd=tmp_path).returncode == 0
    assert (tmp_path / "report.txt").read_text().startswith("# python -m common.upgrade report\n")


def test_files_it_cannot_read_parse_or_write_are_named_and_the_rest_of_the_tree_goes_on(tmp_path):
    tree, out = tmp_path / "old", tmp_path / "new"
    tree.mkdir()
    os.mkfifo(tree / "a_fifo.py")
    os.mkfifo(tree / "a_fifo.dat")
    (tree / "b_loop.py").symlink_to(tree / "b_loop.py")
    (tree / "c_latin.py").write_bytes(b"name = 'caf\xe9'\n")
    (tree / "d_binary.py").write_bytes(b"\x00\x01\x02")
    (tree / "e_swapped.py").write_text("x = = 1\n")
    (tree / "sub").mkdir()
    (tree / "sub" / "f_unwritable.py").write_text("import tensorflow as tf\n")
    (out / "sub").parent.mkdir()
    (out / "sub").write_text("a file where the output folder should be\n")
    (tree / "linked").symlink_to(tmp_path)
    (tree / "z_good.py").write_text("import tensorflow as tf\nspec = tf.estimator.EstimatorSpec\n")
    report = tmp_path / "report.txt"
    result = _upgrade(f"--intree={tree}", f"--outtree={out}", f"--reportfile={report}")  # returns: no FIFO hang
    assert result.returncode == 1
    text = report.read_text()
    for line in (f"ERROR: {tree / 'a_fifo.py'}: not a regular file (a FIFO, device or socket): skipped: not upgraded",
                 f"ERROR: {tree / 'a_fifo.dat'}: not a regular file (a FIFO, device or socket): skipped: not copied",
                 f"ERROR: {tree / 'b_loop.py'}: cannot be read: Too many levels of symbolic links: not upgraded",
                 f"ERROR: {tree / 'c_latin.py'}: is not valid utf-8 at byte 11 (line 1)",
                 f"{tree / 'd_binary.py'}: ERROR: not valid Python (source code string cannot contain null bytes)",
                 f"{tree / 'e_swapped.py'}: ERROR: not valid Python (invalid syntax (<unknown>, line 1))",
                 f"ERROR: {out / 'sub' / 'f_unwritable.py'}: cannot be written: {out / 'sub'} is a file, not a "
                 "folder: not upgraded",
                 f"ERROR: {tree / 'linked'}: a symlink to a directory outside the tree, or by an absolute path: not "
                 "followed: skipped"):
        assert line in text, text
    assert (out / "z_good.py").read_text() == "import common\nimport tensorflow as tf\nspec = common.EstimatorSpec\n"
    assert text.splitlines()[-1].endswith("; 8 file(s) not upgraded or copied (marked ERROR).")


def test_an_in_place_upgrade_on_a_full_disk_leaves_the_input_whole(small_disk):
    program = small_disk / "p.py"
    source = "import tensorflow as tf\n" + "est = tf.estimator.Estimator(fn)\n" * 3000  # 100 kB
    program.write_text(source)
    filler = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(filler, b"\0" * 4096):  # fill the rest of the disk
            pass
    except OSError:
        pass
    os.close(filler)
    result = _upgrade(f"--infile={program}", f"--outfile={program}", "--reportfile=")
    assert result.returncode == 1
    assert f"ERROR: {program}: cannot be written (No space left on device); nothing there changed" in result.stdout
    assert program.read_text() == source
    assert sorted(os.listdir(small_disk)) == ["filler", "p.py"]


def test_one_tf1_file_makes_a_trees_premade_estimators_tf1s_in_every_file_and_the_report_says_which(tmp_path):
    tree = tmp_path / "old"
    (tree / "trainer").mkdir(parents=True)
    (tree / "trainer" / "task.py").write_text("import tensorflow as tf\ntf.logging.set_verbosity(tf.logging.INFO)\n")
    (tree / "trainer" / "model.py").write_text("import tensorflow as tf\n\n\ndef build(columns):\n"
                                               "    return tf.estimator.DNNClassifier([4], columns)\n")
    result = _upgrade(f"--intree={tree}", f"--outtree={tmp_path / 'new'}", "--reportfile=")
    assert result.returncode == 0, result.stderr
    assert "common.canned.v1.DNNClassifier([4], columns)" in (tmp_path / "new" / "trainer" / "model.py").read_text()
    assert f"The tree is a TF1 program (its TF1 names, in {tree / 'trainer' / 'task.py'})" in result.stdout
    alone = _upgrade(f"--infile={tree / 'trainer' / 'model.py'}", f"--outfile={tmp_path / 'alone.py'}",
                     "--reportfile=")
    assert alone.returncode == 0 and "common.canned.DNNClassifier(" in (tmp_path / "alone.py").read_text()


def test_check_model_dir_says_whose_checkpoints_a_dir_holds_and_how_they_are_read_without_writing(tmp_path):
    data = os.path.join(ROOT, "tests", "data", "tf215_model_dirs")
    premade = tmp_path / "premade"
    shutil.copytree(os.path.join(data, "dnn_classifier", "model"), premade)
    before = sorted(os.listdir(premade))
    result = _upgrade(f"--check_model_dir={premade}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"{premade}: newest checkpoint model.ckpt-6 (step 6), 15 tensors", "written by tf.estimator"]
    assert "  8 a Keras 2 Adagrad optimizer's state (a premade estimator's): read as the project's optimizer " \
           "state: training/Adagrad/decay, " in result.stdout
    assert "tf.estimator 2.15 can take the dir back" in lines[-1]
    assert sorted(os.listdir(premade)) == before
    custom = _upgrade(f"--check_model_dir={os.path.join(data, 'custom_optimizer', 'model')}")
    assert "2 a TF1 optimizer's slots and accumulators: read as they are: bias/AccumulatingSGD, " \
           "weights/AccumulatingSGD" in custom.stdout
    keras = _upgrade(f"--check_model_dir={os.path.join(data, 'model_to_estimator', 'model')}")
    assert "written by tf.estimator (model_to_estimator, object-based)" in keras.stdout
    assert "keep a copy to roll back" in keras.stdout
    assert "no checkpoint" in _upgrade(f"--check_model_dir={tmp_path}").stdout
    refused = _upgrade(f"--check_model_dir={tmp_path / 'nope'}")
    assert refused.returncode != 0 and "--check_model_dir=" in refused.stderr and "no such directory" in refused.stderr


def test_a_symlink_to_a_directory_of_the_tree_is_made_again_and_the_directory_upgraded_where_it_is(tmp_path):
    """A slim program's finetune/nets -> ../nets: the link is made in the output tree, the files once."""
    tree, out = tmp_path / "tree", tmp_path / "out"
    (tree / "nets").mkdir(parents=True)
    (tree / "nets" / "net.py").write_text("import tensorflow as tf\nspec = tf.estimator.EstimatorSpec\n")
    (tree / "finetune").mkdir()
    (tree / "finetune" / "nets").symlink_to("../nets")
    result = _upgrade(f"--intree={tree}", f"--outtree={out}", f"--reportfile={tmp_path / 'report.txt'}")
    assert result.returncode == 0, result.stdout
    assert os.readlink(out / "finetune" / "nets") == "../nets"
    assert (out / "finetune" / "nets" / "net.py").read_text().startswith("import common\n")
    assert f"made {out / 'finetune' / 'nets'} the same symlink to a directory of the tree (../nets)" in \
        (tmp_path / "report.txt").read_text()

