"""No import cycle inside the ``toxeval`` package: its modules form layers, and a module
never reaches itself again by following imports.

What counts as an import (read from the sources with ``ast``, nothing is imported):

- every ``import`` and ``from ... import`` statement, at module level **and inside
  functions**: a deferred import (to keep ``import toxeval.metrics`` lean, or to load
  matplotlib only when plotting) still runs, and two modules that import each other
  lazily are as tangled as two that do it at import time;
- except those under ``if TYPE_CHECKING:``, which never run (annotations only).

An import names the module it loads: ``from toxeval.a import b`` is an edge to
``toxeval.a.b`` when that is a module, else to ``toxeval.a`` (its ``__init__``);
the parent packages a submodule import initialises on the way are not edges (a package
that re-exports its submodules would otherwise be a cycle with each of them).
The native ``toxeval._core`` is a leaf.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "toxeval"
if not PACKAGE.is_dir():  # tests run against an installed package, away from the sources
    pytest.skip("python/toxeval is not beside the tests", allow_module_level=True)


def _module_names() -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the toxeval modules it imports (see the module docstring)."""
    modules = _module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text("utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                # the deepest toxeval module the dotted name names
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(found)


def _path(graph: dict[str, set[str]], component: list[str]) -> str:
    """One cycle through the component's first module, as ``a -> b -> a``."""
    start = component[0]
    members = set(component)
    seen = {start}
    trail = [start]

    def walk(v: str) -> bool:
        for w in sorted(graph[v] & members):
            if w == start:
                trail.append(w)
                return True
            if w not in seen:
                seen.add(w)
                trail.append(w)
                if walk(w):
                    return True
                trail.pop()
        return False

    walk(start)
    return " -> ".join(trail)


def test_no_import_cycle_in_the_package() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(_path(graph, c) for c in found)


def test_the_graph_sees_deferred_imports_and_skips_type_checking(tmp_path: Path) -> None:
    """The reader itself: a cycle through a function-level import is found, one through
    ``if TYPE_CHECKING:`` is not."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": set()}
    assert cycles(graph) == [["a", "b"]]
    assert _path(graph, ["a", "b"]) == "a -> b -> a"
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from toxeval.x import y\n"
        "def f():\n    from toxeval.z import w\n"
    )
    names = {n.module for n in _imports(ast.parse(code)) if isinstance(n, ast.ImportFrom)}
    assert names == {"typing", "toxeval.z"}


def test_the_known_layers_are_in_the_graph() -> None:
    """A sanity check that the graph is read, not empty: the report imports the HTML page
    lazily, and the CLI imports the scoring layer."""
    graph = import_graph()
    assert "toxeval.html_report" in graph["toxeval.report"]
    assert any(
        t.startswith("toxeval.scoring")
        for v, ts in graph.items()
        if v.startswith("toxeval.cli")
        for t in ts
    )
