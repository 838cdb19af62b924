"""A program's own module named common is renamed program_common, its imports and the names they bind too, so
that this project's package `common` imports beside it."""

import os
import subprocess
import sys
import textwrap

from common.upgrade import own_common
from tests import ROOT
from tests.upgrade import upgrade_command as _upgrade


def test_a_tree_holds_its_own_common_as_a_folder_or_a_file_and_its_paths_are_renamed():
    assert own_common.tree_holds_own(["main.py", os.path.join("common", "helper.py")])
    assert own_common.tree_holds_own([os.path.join("models", "common.py")])
    assert not own_common.tree_holds_own(["common_utils.py", os.path.join("pkg", "commons", "x.py")])
    assert own_common.renamed_path(os.path.join("models", "common", "hook.py")) == os.path.join(
        "models", "program_common", "hook.py")
    assert own_common.renamed_path("common.py") == "program_common.py"


def test_imports_of_it_and_the_names_they_bind_are_renamed_and_nothing_else():
    source = textwrap.dedent('''\
        import common
        import common.hooks as hooks
        from common.inference_warmup import write as warm, common_default
        from common import tpu_profiler_hook
        x = common.flags.value + config.common
        def f(common_value):
            return common.helper(common_value)
        ''')
    new, changes = own_common.rename_imports(source)
    assert new == textwrap.dedent('''\
        import program_common
        import program_common.hooks as hooks
        from program_common.inference_warmup import write as warm, common_default
        from program_common import tpu_profiler_hook
        x = program_common.flags.value + config.common
        def f(common_value):
            return program_common.helper(common_value)
        ''')
    assert [c.message for c in changes] == ["renamed the program's own module common to program_common (6 "
                                            "place(s)): this project's package is common"]
    assert own_common.rename_imports("import os\nx = 1\n") == ("import os\nx = 1\n", [])


def test_an_upgraded_tree_with_its_own_common_runs_whichever_comes_first_on_the_path(tmp_path):
    tree, out = tmp_path / "old", tmp_path / "new"
    (tree / "common").mkdir(parents=True)
    (tree / "common" / "__init__.py").write_text("")
    (tree / "common" / "helper.py").write_text("def warmup():\n    return 'own'\n")
    (tree / "main.py").write_text("import tensorflow.compat.v1 as tf\nfrom common import helper\n"
                                  "print(helper.warmup(), tf.estimator.ModeKeys.TRAIN)\n")
    result = _upgrade(f"--intree={tree}", f"--outtree={out}", "--reportfile=")
    assert result.returncode == 0, result.stderr
    assert "The tree holds its own module common, written as program_common" in result.stdout
    assert sorted(os.listdir(out)) == ["main.py", "program_common"]
    for path in (f"{ROOT}{os.pathsep}{out}", f"{out}{os.pathsep}{ROOT}"):
        ran = subprocess.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONPATH=path))
        assert ran.stdout.strip() == "own train", ran.stderr[-500:]
