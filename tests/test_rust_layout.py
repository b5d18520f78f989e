"""The kernels never know Python: under ``rust/``, only ``binding/`` names pyo3 or
numpy, and only ``lib.rs`` uses the ``python`` feature (to compile ``binding/``). The
compiler checks the first without the feature; a feature gate elsewhere would hide a
kernel's pyo3 use from that build, so it is refused here."""

import re
from pathlib import Path

import pytest

RUST = Path(__file__).resolve().parent.parent / "rust"


@pytest.fixture(autouse=True)
def _beside_the_sources() -> None:
    if not RUST.is_dir():  # tests run against an installed package, away from the repo
        pytest.skip("the Rust sources are not beside the tests")


def _sources() -> list[Path]:
    return sorted(p for p in RUST.rglob("*.rs") if "binding" not in p.relative_to(RUST).parts)


def test_kernels_do_not_name_python() -> None:
    pattern = re.compile(r"\b(pyo3|numpy)::|feature\s*=\s*\"python\"")
    found = [
        f"{p.relative_to(RUST)}:{i}"
        for p in _sources()
        if p.name != "lib.rs"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert len(_sources()) > 20
    assert found == []


def test_lib_gates_only_the_binding() -> None:
    lib = (RUST / "lib.rs").read_text(encoding="utf-8")
    gated = re.findall(r"#\[cfg\(feature = \"python\"\)\]\s*(.+)", lib)
    assert gated == ["mod binding;"]
