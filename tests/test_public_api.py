"""The public API is documented as tf.estimator's was: every name `common` exports (and the hooks, metrics,
towers and schedules a user reaches) has a docstring that says what each argument means, what it returns and
what it raises.

The rules, checked on each public function and method (a class's constructor through the class docstring):
- every parameter is named under "Args:" (`*args` and `**kwargs` by those names);
- "Returns:" (or "Yields:") where the body returns (yields) a value;
- "Raises:" naming each exception class the body raises itself;
- a property has a docstring.
"""

import ast
import inspect
import re
import textwrap

import pytest

import common
from common import early_stopping, hooks, metrics
from common.engine import towers
from common.jobs import schedules


def public_objects():
    """(dotted name, object) of the documented surface."""
    found = [(f"common.{name}", getattr(common, name)) for name in common.__all__
             if not inspect.ismodule(getattr(common, name))]
    found += [(f"common.hooks.{name}", getattr(hooks, name)) for name in hooks.__all__]
    found += [(f"common.metrics.{name}", getattr(metrics, name))
              for name in ("Metric", "mean", "accuracy", "precision", "recall", "binary_log_loss")]
    found += [(f"common.early_stopping.{name}", getattr(early_stopping, name)) for name in dir(early_stopping)
              if not name.startswith("_") and inspect.isfunction(getattr(early_stopping, name))
              and getattr(early_stopping, name).__module__ == early_stopping.__name__]
    found += [("common.engine.towers.split_batch", towers.split_batch),
              ("common.engine.towers.average_gradients", towers.average_gradients),
              ("common.jobs.schedules.piecewise_constant", schedules.piecewise_constant),
              ("common.jobs.schedules.exponential_decay", schedules.exponential_decay)]
    return found


def documented_callables():
    """(dotted name, function, docstring that documents it) of every public function and method."""
    found = []
    for name, obj in public_objects():
        if not inspect.isclass(obj):
            found.append((name, obj, inspect.getdoc(obj)))
            continue
        for attribute, member in vars(obj).items():
            if attribute == "__init__" and inspect.isfunction(member):
                found.append((f"{name}.__init__", member, "\n".join(filter(None, (inspect.getdoc(obj),
                                                                                   inspect.getdoc(member))))))
            elif not attribute.startswith("_") and inspect.isfunction(member):
                found.append((f"{name}.{attribute}", member, inspect.getdoc(member)))
    return found


def documented_properties():
    return [(f"{name}.{attribute}", member) for name, obj in public_objects() if inspect.isclass(obj)
            for attribute, member in vars(obj).items()
            if isinstance(member, property) and not attribute.startswith("_")]


def _section(doc, title):
    """The text of a docstring's section (its indented lines after `title`), or None."""
    match = re.search(rf"^{title}\n((?:[ \t]+.*\n?|\n)*)", doc + "\n", re.M)
    return match.group(1) if match else None


def _body(function):
    """The function's own statements (not those of functions defined inside it)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError):  # (a dataclass's generated __init__ has no source)
        return []
    own = []

    def visit(node, top):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and not top:
            return
        own.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child, False)
    visit(tree.body[0], True)
    return own


def problems(function, doc):
    """What the docstring leaves out, by the rules of the module."""
    if not doc:
        return ["no docstring"]
    found = []
    parameters = [p for p in inspect.signature(function).parameters.values() if p.name not in ("self", "cls")]
    args = _section(doc, "Args:")
    for parameter in parameters:
        shown = {"VAR_POSITIONAL": f"*{parameter.name}", "VAR_KEYWORD": f"**{parameter.name}"}.get(
            parameter.kind.name, parameter.name)
        if args is None or not re.search(rf"^\s+{re.escape(shown)}( \(.*?\))?:", args, re.M):
            found.append(f"argument {shown} not under Args:")
    body = _body(function)
    if function.__name__ != "__init__":
        if any(isinstance(n, ast.Return) and n.value is not None for n in body) and _section(doc, "Returns:") is None:
            found.append("no Returns:")
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in body) and _section(doc, "Yields:") is None:
            found.append("no Yields:")
    raised = {n.exc.func.id if isinstance(n.exc, ast.Call) and isinstance(n.exc.func, ast.Name) else
              n.exc.id if isinstance(n.exc, ast.Name) else None for n in body if isinstance(n, ast.Raise) and n.exc}
    raised = {name for name in raised if name and name[0].isupper()}
    raises = _section(doc, "Raises:") or ""
    found += [f"raises {name}, not under Raises:" for name in sorted(raised) if name not in raises]
    return found


@pytest.mark.parametrize("name,function,doc", documented_callables(),
                         ids=[name for name, _, _ in documented_callables()])
def test_each_public_function_says_what_its_arguments_mean_what_it_returns_and_raises(name, function, doc):
    assert not problems(function, doc), f"{name}: {problems(function, doc)}"


@pytest.mark.parametrize("name,member", documented_properties(), ids=[name for name, _ in documented_properties()])
def test_each_public_property_has_a_docstring(name, member):
    assert member.__doc__, name


def test_help_of_estimator_train_is_a_page_to_work_from():
    page = inspect.getdoc(common.Estimator.train)
    for words in ("input_fn", "hooks", "steps", "max_steps", "saving_listeners", "Returns:", "Raises:"):
        assert words in page, words
