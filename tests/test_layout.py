"""The framework's shape: common/ in packages that say what they hold, layered, each module tested and small.

A package may import from the packages below it in LAYERS and from itself,
never from one above it; so no two packages import each other. Within a
package, modules import no cycle. Every module of common/ has a test module
of its own, tests/<package>/test_<module>.py.
"""

import ast
import os

from tests import ROOT

COMMON = os.path.join(ROOT, "common")

# Lowest first: a package may import only from those before it (and itself).
LAYERS = ("internals", "state", "devices", "spec", "layers", "hooks", "tf1_runtime", "variables", "tf1", "engine",
          "export", "estimator", "training", "canned", "tpu", "upgrade", "jobs")
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


def test_modules_stay_small():
    sizes = {}
    for package, module, path in modules():
        with open(path, encoding="utf-8") as source:
            sizes[f"common/{package}/{module}.py"] = len(source.read().splitlines())
    big = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"
    assert sizes["common/estimator/estimator.py"] <= MAX_ESTIMATOR_LINES
