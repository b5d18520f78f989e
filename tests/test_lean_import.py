"""``import toxeval.metrics`` (the scikit-learn drop-in) stays lean.

The drop-in use must not pay for the evaluation side: importing ``toxeval``,
``toxeval.metrics`` or ``toxeval.stats`` loads neither pyarrow nor rich nor aiohttp (nor
scikit-learn/SciPy, which toxeval never needs at run time). Checked in a fresh
interpreter, where nothing was imported before. Import time is measured in
benches/bench_import.py, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pyarrow",
    "rich",
    "aiohttp",
    "sklearn",
    "scipy",
    "matplotlib",
    "polars",
    "pandas",
    "dask",
    "distributed",
)


@pytest.mark.parametrize("module", ["toxeval", "toxeval.metrics", "toxeval.stats"])
def test_import_loads_no_heavy_dependency(module: str) -> None:
    probe = (
        "import json, sys\n"
        f"import {module}\n"
        f"print(json.dumps(sorted(m.split('.')[0] for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_probe_sees_a_heavy_import() -> None:
    """The probe itself can fail: importing the evaluation side does load pyarrow."""
    pytest.importorskip("pyarrow")
    probe = "import sys\nimport toxeval\ntoxeval.load_dataset\nprint('pyarrow' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "True"
