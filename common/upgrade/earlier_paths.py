"""Where the module paths that earlier versions of this project (and the programs its upgrade wrote) named live now.

`python -m common.upgrade` writes `import common.<path>` into a user's program.
When a module moves, programs upgraded before the move still import it by
the old path. This module keeps those paths working without a file per old
path: a finder on `sys.meta_path` answers `import common.tf1.crf` (and
`from common.tf1 import crf`) with the module that now holds it, the same
module object. It answers only the names in MOVED, all under `common.`, and
imports nothing until such a name is imported. The upgrade itself writes
the new homes.
"""

import importlib
import importlib.abc
import importlib.util
import sys

# old path -> the module it is now (each has its test in tests/upgrade/test_earlier_paths.py)
MOVED = {
    "common.early_stopping": "common.training.early_stopping",
    "common.tf1.optimizer": "common.tf1_runtime.optimizer",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path as the module it moved to (see the module)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self):
        self._own_specs = {}  # module name -> its own __spec__, which the import system replaces by the old path's

    def create_module(self, spec):
        module = importlib.import_module(MOVED[spec.name])
        self._own_specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._own_specs.pop(module.__name__, module.__spec__)


_FINDER = _MovedModuleFinder()


def install():
    """Puts the finder on sys.meta_path once (what `import common` does)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
