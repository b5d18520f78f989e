"""Module boundaries inside the ``toxeval`` package: no private name crosses a module
(a name another module imports has no leading underscore) and no private module is
imported from outside its package (``toxeval.stats`` takes ``kendalltau`` from
``toxeval.metrics``, not from ``toxeval.metrics._kendall``). The native ``_core``
module is the one exception: it is the binding every layer calls."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "toxeval"
ALLOWED = {"_core"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in ALLOWED


def _crossings(path: Path, package_dir: Path = PACKAGE) -> list[str]:
    """The imports in ``path`` (a file under ``package_dir``, the ``toxeval`` folder)
    that reach a private name of another module, or a private module of another
    package."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    package = parts if path.name == "__init__.py" else parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        module = node.module.split(".")
        if module[0] != "toxeval":
            continue
        for i, part in enumerate(module):
            if _private(part) and tuple(package[:i]) != tuple(module[:i]):
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
        found += [
            f"{path.name}:{node.lineno} imports {node.module}.{a.name}"
            for a in node.names
            if _private(a.name)
        ]
    return found


def _modules() -> list[Path]:
    if not PACKAGE.is_dir():  # tests run against an installed package, away from the repo
        pytest.skip("the package sources are not beside the tests")
    return sorted(PACKAGE.rglob("*.py"))


def test_no_private_name_crosses_a_module() -> None:
    crossings = [c for path in _modules() for c in _crossings(path)]
    assert crossings == []


def test_the_check_sees_a_crossing(tmp_path: Path) -> None:
    # The check itself: a private name, and a private module of another package, count;
    # a private module of the importer's own package and _core do not.
    root = tmp_path / "toxeval"
    (root / "stats").mkdir(parents=True)
    (root / "metrics").mkdir()
    outside = root / "stats" / "x.py"
    outside.write_text(
        "from toxeval.metrics._kendall import kendalltau\n"
        "from toxeval.metrics import _helper\n"
        "from toxeval import _core\n"
    )
    assert _crossings(outside, root) == [
        "x.py:1 imports toxeval.metrics._kendall",
        "x.py:2 imports toxeval.metrics._helper",
    ]
    inside = root / "metrics" / "y.py"
    inside.write_text("from toxeval.metrics._kendall import kendalltau\n")
    assert _crossings(inside, root) == []


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in _modules()}
    assert sizes and {name: n for name, n in sizes.items() if n > 500} == {}


def _test_module_imports(path: Path) -> list[str]:
    """The imports of another test module (``test_*``) in the test file ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        found += [f"{path.name}:{node.lineno} imports {m}" for m in names if m.startswith("test_")]
    return found


def test_no_test_module_imports_another(tmp_path: Path) -> None:
    # Shared test code lives in helpers.py, conftest.py, fake_openai.py or raw_http.py.
    bad = tmp_path / "test_x.py"
    bad.write_text("import test_y\nfrom test_z import a\nfrom helpers import b\n")
    assert _test_module_imports(bad) == ["test_x.py:1 imports test_y", "test_x.py:2 imports test_z"]
    here = Path(__file__).parent
    assert [c for p in sorted(here.glob("test_*.py")) for c in _test_module_imports(p)] == []
