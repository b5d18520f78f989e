"""Cargo.toml's release profile keeps what the wheel's users rely on.

A Rust panic must reach Python as ``pyo3_runtime.PanicException``, which PyO3 can
only raise when panics unwind: ``panic = "abort"`` (smaller, see
docs/performance.md) would kill the interpreter instead. The module is stripped:
symbols are most of an unstripped module and no use to a user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

CARGO_TOML = Path(__file__).resolve().parents[1] / "Cargo.toml"


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    if not CARGO_TOML.is_file():
        pytest.skip("Cargo.toml is not beside the tests")
    profile = tomllib.loads(CARGO_TOML.read_text(encoding="utf-8"))["profile"]["release"]
    assert isinstance(profile, dict)
    return profile


def test_release_panics_unwind_into_python(release: dict[str, Any]) -> None:
    assert release.get("panic", "unwind") == "unwind"


def test_release_module_is_stripped(release: dict[str, Any]) -> None:
    assert release.get("strip") in (True, "symbols")
