"""The native functions that ``_core.pyi`` types through a shared callable protocol
(one ``__call__`` for several functions) take exactly the parameters of that
``__call__``: stubtest checks the signatures of ``def`` stubs only."""

import ast
import inspect
from pathlib import Path

import pytest
from toxeval import _core

STUB = Path(_core.__file__).parent / "_core.pyi"


def _protocol_typed() -> list[tuple[str, ast.FunctionDef]]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    calls = {
        node.name: item
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name == "__call__"
    }
    out = []
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            ann = node.annotation
            base = ann.value if isinstance(ann, ast.Subscript) else ann
            if isinstance(base, ast.Name) and base.id in calls:
                out.append((node.target.id, calls[base.id]))
    return out


def _params(call: ast.FunctionDef) -> list[tuple[str, str, bool]]:
    a = call.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    out = [
        (p.arg, "POSITIONAL_OR_KEYWORD", i >= first_default)
        for i, p in enumerate(positional)
        if p.arg != "self"
    ]
    out += [
        (p.arg, "KEYWORD_ONLY", d is not None)
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    return out


CASES = _protocol_typed()


def test_the_stub_types_functions_through_protocols() -> None:
    assert len(CASES) >= 4


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
def test_protocol_typed_function_matches_runtime(name: str, call: ast.FunctionDef) -> None:
    runtime = inspect.signature(getattr(_core, name))
    got = [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in runtime.parameters.values()
    ]
    assert got == _params(call)
