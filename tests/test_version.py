"""One version: Cargo.toml's, shown by ``toxeval.__version__`` and ``toxeval --version``.

The version is set once, in Cargo.toml; maturin writes it into the distribution's
metadata (``dynamic = ["version"]``) and the native module exports it. When toxeval
is imported from an installed distribution the three must agree; from a source
checkout (the package on ``PYTHONPATH``) the reference is Cargo.toml itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import toxeval
from toxeval.cli import main

CARGO_TOML = Path(__file__).resolve().parents[1] / "Cargo.toml"


def _loaded_from_distribution() -> metadata.Distribution | None:
    """The installed distribution that ``toxeval`` was imported from, if any."""
    try:
        dist = metadata.distribution("toxeval")
    except metadata.PackageNotFoundError:
        return None
    init = Path(toxeval.__file__).resolve()
    for f in dist.files or ():
        if str(f).replace("\\", "/").endswith("toxeval/__init__.py"):
            if Path(str(dist.locate_file(f))).resolve() == init:
                return dist
    return None


def _expected_version() -> str:
    dist = _loaded_from_distribution()
    if dist is not None:
        return dist.version
    if CARGO_TOML.is_file():
        m = re.search(r'^version\s*=\s*"([^"]+)"', CARGO_TOML.read_text(encoding="utf-8"), re.M)
        assert m, "Cargo.toml has no package version"
        return m.group(1)
    pytest.skip("toxeval is neither an installed distribution nor next to its Cargo.toml")


def test_module_version_is_the_distribution_version() -> None:
    assert toxeval.__version__ == _expected_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)*", toxeval.__version__)


def test_cli_version_is_the_distribution_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.split() == ["toxeval", _expected_version()]


def test_cli_version_in_a_fresh_process() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toxeval.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert out.split() == ["toxeval", _expected_version()]
