"""The framework's shape: common/ in packages that say what they hold, layered, each module tested and small.

A package may import from the packages below it in LAYERS and from itself,
never from one above it; so no two packages import each other. Within a
package, modules import no cycle. Every module of common/ has a test module
of its own, tests/<package>/test_<module>.py. docs/ARCHITECTURE.md draws
these layers and says where each kind of new piece goes.
"""

import ast
import os

from tests import ROOT

COMMON = os.path.join(ROOT, "common")

# Lowest first: a package may import only from those before it (and itself).
FOUNDATIONS = ("internals", "state", "devices", "spec", "layers", "hooks")  # files, devices, the contract, hooks
TF1_RUNTIME = ("tf1_runtime",)  # the per-call TF1 graph and variable store, the TF1 optimizer base
CORE = ("variables", "engine", "export")  # who owns the variables, how a call runs, SavedModel export
ADAPTERS = ("adapters",)  # TF1's forms (tensors, SessionRunHooks, metric pairs, summaries) made the core's
FACADE = ("estimator",)  # the Estimator: where a user's forms enter, through the adapters
SERVICES = ("tf1", "training", "canned", "tpu")  # TF1's API in model_fn; train_and_evaluate; premade; TPU
CONTRIB = ("contrib",)  # tf.contrib's pieces and TF1's side libraries
PROGRAMS = ("jobs", "upgrade")  # the dataset mains' kit; python -m common.upgrade
LAYERS = FOUNDATIONS + TF1_RUNTIME + CORE + ADAPTERS + FACADE + SERVICES + CONTRIB + PROGRAMS
# What exists for TF1-era programs: the engine imports none of it, and the core below the façade imports only
# the runtime (through the variable registry), never the adapters, TF1's API or contrib.
TF1_SURFACE = TF1_RUNTIME + ADAPTERS + ("tf1",) + CONTRIB
MAX_LINES = 400
MAX_ESTIMATOR_LINES = 300


def packages():
    return sorted(name for name in os.listdir(COMMON) if os.path.isfile(os.path.join(COMMON, name, "__init__.py")))


def modules():
    """(package, module name, path) of every module of common/ but the packages' __init__ and __main__."""
    found = []
    for package in packages():
        for name in sorted(os.listdir(os.path.join(COMMON, package))):
            if name.endswith(".py") and name not in ("__init__.py", "__main__.py"):
                found.append((package, name[:-3], os.path.join(COMMON, package, name)))
    return found


def imported_common_modules(path):
    """The common.<package>[.<module>] names a source file imports, anywhere in it."""
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith("common."):
            parts = node.module.split(".")
            if len(parts) == 2:  # from common.package import module_or_name
                names.extend(f"{node.module}.{alias.name}" for alias in node.names)
            else:
                names.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.module == "common":
            names.extend(f"common.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names if alias.name.startswith("common."))
    return names


def test_common_holds_only_packages_each_saying_what_belongs_there():
    loose = [name for name in os.listdir(COMMON) if name.endswith(".py") and name != "__init__.py"]
    assert not loose, f"modules outside a package: {loose}"
    assert set(packages()) <= set(LAYERS), f"packages without a layer: {set(packages()) - set(LAYERS)}"
    for package in packages():
        with open(os.path.join(COMMON, package, "__init__.py"), encoding="utf-8") as source:
            assert ast.get_docstring(ast.parse(source.read())), f"common/{package}/__init__.py has no docstring"


def test_no_package_imports_from_a_package_above_it():
    above = []
    for package, module, path in modules():
        for name in imported_common_modules(path):
            target = name.split(".")[1]
            if target in LAYERS and LAYERS.index(target) > LAYERS.index(package):
                above.append(f"common.{package}.{module} imports {name}")
    assert not above, "\n".join(above)


def test_the_engine_and_export_import_nothing_of_the_tf1_surface():
    found = [f"common.{package}.{module} imports {name}" for package, module, path in modules()
             if package in ("engine", "export") for name in imported_common_modules(path)
             if name.split(".")[1] in TF1_SURFACE]
    assert not found, "\n".join(found)


def test_no_package_below_contrib_imports_it_and_only_the_variables_reach_the_tf1_runtime_from_the_core():
    found = []
    for package, module, path in modules():
        for name in imported_common_modules(path):
            target = name.split(".")[1]
            if target in CONTRIB and package not in CONTRIB + PROGRAMS:
                found.append(f"common.{package}.{module} imports {name}")
            if target in TF1_RUNTIME and package in FOUNDATIONS + CORE and package != "variables":
                found.append(f"common.{package}.{module} imports {name}")
    assert not found, "\n".join(found)


def test_no_import_cycles_between_modules():
    graph = {f"common.{package}.{module}": set() for package, module, _ in modules()}
    for package, module, path in modules():
        for name in imported_common_modules(path):
            if name in graph:
                graph[f"common.{package}.{module}"].add(name)
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module):] + [module]))
        if module in done:
            return
        path.append(module)
        for imported in sorted(graph[module]):
            visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_every_module_has_a_test_module_of_its_own():
    missing = [f"tests/{package}/test_{module}.py" for package, module, _ in modules()
               if not os.path.isfile(os.path.join(ROOT, "tests", package, f"test_{module}.py"))]
    assert not missing, f"modules without their test module: {missing}"


def code_lines(path):
    """A module's lines, its docstrings not counted: what a reader must follow (documentation is free)."""
    with open(path, encoding="utf-8") as source:
        text = source.read()
    documented = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            documented.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    return len(text.splitlines()) - len(documented)


def test_modules_stay_small():
    sizes = {f"common/{package}/{module}.py": code_lines(path) for package, module, path in modules()}
    big = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines of code: {big}"
    assert sizes["common/estimator/estimator.py"] <= MAX_ESTIMATOR_LINES
