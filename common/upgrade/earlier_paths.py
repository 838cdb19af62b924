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
    "common.canned.contrib_learn": "common.contrib.learn_canned",
    "common.early_stopping": "common.training.early_stopping",
    "common.tf1.arg_scopes": "common.contrib.arg_scopes",
    "common.tf1.contrib": "common.contrib.layers",
    "common.tf1.contrib_columns": "common.contrib.columns",
    "common.tf1.contrib_losses": "common.contrib.losses",
    "common.tf1.contrib_metrics": "common.contrib.metrics",
    "common.tf1.crf": "common.contrib.crf",
    "common.tf1.data": "common.adapters.tensor_inputs",
    "common.tf1.fused_rnn": "common.contrib.fused_rnn",
    "common.tf1.gone": "common.contrib.gone",
    "common.tf1.graph_input": "common.adapters.graph_input",
    "common.tf1.hparams": "common.contrib.hparams",
    "common.tf1.initializers": "common.contrib.initializers",
    "common.tf1.lazy_adam": "common.contrib.lazy_adam",
    "common.tf1.learn_datasets": "common.contrib.learn_datasets",
    "common.tf1.moving_averages": "common.adapters.moving_averages",
    "common.tf1.optimizer": "common.tf1_runtime.optimizer",
    "common.tf1.predictor": "common.contrib.predictor",
    "common.tf1.rnn_cell": "common.contrib.rnn_cell",
    "common.tf1.session_run_hook": "common.adapters.session_run_hooks",
    "common.tf1.slim": "common.contrib.slim",
    "common.training.learn": "common.contrib.learn",
    "common.training.learn_estimator": "common.contrib.learn_estimator",
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
        sys.meta_path.insert(0, _FINDER)  # (before the path finder: an old path may name a folder left behind)
