"""The framework's shape: no import cycles in common/, no module (or subpackage) leaning on most of the others."""

import ast
import os

COMMON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common")


def _sources(node):
    """The source files of a node of common/: a module, or every file of a subpackage."""
    path = os.path.join(COMMON, node)
    if os.path.isdir(path):
        return [os.path.join(path, name) for name in sorted(os.listdir(path)) if name.endswith(".py")]
    return [path + ".py"]


def sibling_imports():
    """{node: set of nodes it imports} for every module and subpackage (tf1) of common/ but __init__."""
    nodes = {name[:-3] for name in os.listdir(COMMON) if name.endswith(".py") and name != "__init__.py"}
    nodes |= {name for name in os.listdir(COMMON) if os.path.isfile(os.path.join(COMMON, name, "__init__.py"))}
    graph = {}
    for node in nodes:
        found = set()
        for source_path in _sources(node):
            with open(source_path, encoding="utf-8") as source:
                tree = ast.parse(source.read())
            for ast_node in ast.walk(tree):
                if isinstance(ast_node, ast.ImportFrom) and ast_node.module == "common":
                    found.update(alias.name for alias in ast_node.names if alias.name in nodes)
                elif isinstance(ast_node, ast.ImportFrom) and (ast_node.module or "").startswith("common."):
                    found.add(ast_node.module.split(".")[1])
        graph[node] = found - {node}
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
