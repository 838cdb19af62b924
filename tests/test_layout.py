"""The framework's shape: no import cycles in common/, no module leaning on most of the others."""

import ast
import os

COMMON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common")


def sibling_imports():
    """{module: set of common modules it imports} for every module of common/ but __init__."""
    modules = {name[:-3] for name in os.listdir(COMMON) if name.endswith(".py") and name != "__init__.py"}
    graph = {}
    for module in modules:
        with open(os.path.join(COMMON, module + ".py"), encoding="utf-8") as source:
            tree = ast.parse(source.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "common":
                found.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("common."):
                found.add(node.module.split(".")[1])
        graph[module] = found - {module}
    return graph


def test_no_module_of_common_imports_more_than_half_of_its_siblings():
    graph = sibling_imports()
    limit = (len(graph) - 1) // 2
    heavy = {module: sorted(found) for module, found in graph.items() if len(found) > limit}
    assert not heavy, f"more than {limit} sibling imports: {heavy}"


def test_common_has_no_import_cycles():
    graph = sibling_imports()
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
