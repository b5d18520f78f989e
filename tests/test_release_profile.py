"""Cargo.toml's release profile keeps what the wheel's users rely on.

A Rust panic must reach Python as ``pyo3_runtime.PanicException``, which PyO3 can
only raise when panics unwind: ``panic = "abort"`` (smaller, see
docs/performance.md) would kill the interpreter instead. The module is stripped:
symbols are most of an unstripped module and no use to a user. The module stays
small because parallel kernels go through ``rust/parallel.rs``'s one ``dyn`` runner:
rayon's parallel iterators and joins, compiled once per closure and dtype, made most
of the module's code (sizes in docs/performance.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

CARGO_TOML = Path(__file__).resolve().parents[1] / "Cargo.toml"
RUST = CARGO_TOML.parent / "rust"
# Files that may use rayon's generic parallel API directly: the runner itself, and
# the bootstrap's one `par_chunks_mut` over resamples.
RAYON_GENERIC_ALLOWED = {"parallel.rs", "bootstrap/mod.rs"}
RAYON_GENERIC = re.compile(
    r"\.(into_)?par_(iter|iter_mut|chunks|chunks_mut|bridge|sort\w*)\(|rayon::(join|scope)\b"
)


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


def test_parallel_kernels_use_the_one_runner() -> None:
    if not RUST.is_dir():
        pytest.skip("the Rust sources are not beside the tests")
    sources = sorted(RUST.rglob("*.rs"))
    found = sorted(
        {
            p.relative_to(RUST).as_posix()
            for p in sources
            if RAYON_GENERIC.search(p.read_text(encoding="utf-8"))
        }
    )
    assert len(sources) > 20
    assert set(found) <= RAYON_GENERIC_ALLOWED, found
