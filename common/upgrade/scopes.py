"""Which uses of a TensorFlow alias are not TensorFlow: a parameter or local of the same name.

`def f(tf): return tf.estimator` or `for tf in frames:` rebinds `tf` inside
a function; its uses there (and in functions nested in it that do not
rebind it again) are the local, which the rules must leave alone. A
function that imports TensorFlow itself keeps the alias.
"""

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _arguments(args):
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return {a.arg for a in every}


def _own_nodes(scope):
    """The nodes of a function's body, not descending into functions nested in it."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, _SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def _locals(scope, tensorflow_imports):
    """Names the function binds to something of its own (not a TensorFlow import, not `global`)."""
    bound, declared = _arguments(scope.args), set()
    for node in _own_nodes(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names if id(a) not in tensorflow_imports)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return bound - declared


def shadowed_uses(tree, alias_names, tensorflow_imports):
    """(lineno, byte col) of each ast.Name among `alias_names` that a function's own binding shadows.

    tensorflow_imports: ids of the ast.alias nodes that import a TensorFlow module."""
    found = set()

    def visit(node, shadowed):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child.id in shadowed:
                found.add((child.lineno, child.col_offset))
            if not isinstance(child, _SCOPES):
                visit(child, shadowed)
                continue
            inner = (shadowed | _locals(child, tensorflow_imports)) & alias_names
            inner -= _rebound_to_tensorflow(child, tensorflow_imports)
            for field, value in ast.iter_fields(child):  # defaults and decorators belong to the outer scope
                for part in value if isinstance(value, list) else [value]:
                    if isinstance(part, ast.AST):
                        visit_part(part, inner if field == "body" else shadowed)

    def visit_part(part, shadowed):
        if isinstance(part, ast.Name) and part.id in shadowed:
            found.add((part.lineno, part.col_offset))
        visit(part, shadowed)

    visit(tree, frozenset())
    return found


def _rebound_to_tensorflow(scope, tensorflow_imports):
    return {a.asname or a.name.split(".")[0] for node in _own_nodes(scope) if isinstance(node, (ast.Import,
            ast.ImportFrom)) for a in node.names if id(a) in tensorflow_imports}
