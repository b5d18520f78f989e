"""SciPy's own kendalltau tests, run against toxeval.

The installed ``scipy/stats/tests/test_stats.py`` is imported as a module; its
``stats`` global is swapped (per test, by an autouse fixture) for a proxy that
exposes toxeval's ``kendalltau`` and delegates every other name to
``scipy.stats``. The kendalltau test functions and classes are then re-collected
here, so each runs unchanged against toxeval. Tests that cannot pass are listed,
with the reason, in docs/deviations.md (section "kendalltau").
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
import scipy.stats
import toxeval.stats

# SciPy's test module uses SciPy-specific marks, registered by scipy/conftest.py
# (not loaded here: it also changes the multiprocessing start method). Register
# them so that `--strict-markers` accepts the imported module.
_SCIPY_MARKERS = (
    "xslow: SciPy: extremely slow test",
    "xfail_on_32bit: SciPy: fails on 32-bit platforms",
    "array_api_backends: SciPy: iterates on array API backends",
    "skip_xp_backends(backends): SciPy: skip configuration",
    "xfail_xp_backends(backends): SciPy: xfail configuration",
    "timeout: SciPy: non-default timeout",
    "fail_slow: SciPy: non-default slow-failure limit",
    "parallel_threads_limit(n): SciPy: thread limit",
    "thread_unsafe: SciPy: single-threaded test",
    "iterations(n): SciPy: repetitions per thread",
)
_config = getattr(pytest.mark, "_config", None)
if _config is not None:
    _known = {line.split(":")[0].split("(")[0] for line in _config.getini("markers")}
    for _line in _SCIPY_MARKERS:
        if _line.split(":")[0].split("(")[0] not in _known:
            _config.addinivalue_line("markers", _line)

_suite = pytest.importorskip("scipy.stats.tests.test_stats")


class _StatsProxy(ModuleType):
    """``scipy.stats`` with ``kendalltau`` replaced by toxeval's."""

    def __init__(self) -> None:
        super().__init__("scipy.stats")

    def __getattr__(self, name: str) -> Any:
        if name == "kendalltau":
            return toxeval.stats.kendalltau
        return getattr(scipy.stats, name)


@pytest.fixture(autouse=True)
def _toxeval_kendalltau(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_suite, "stats", _StatsProxy())


def test_proxy_is_toxeval() -> None:
    assert _suite.stats.kendalltau is toxeval.stats.kendalltau
    assert _suite.stats.spearmanr is scipy.stats.spearmanr


# The kendalltau tests of scipy/stats/tests/test_stats.py (SciPy 1.17.1).
test_kendalltau = _suite.test_kendalltau
test_kendalltau_vs_mstats_basic = _suite.test_kendalltau_vs_mstats_basic
test_kendalltau_nan_2nd_arg = _suite.test_kendalltau_nan_2nd_arg
test_kendalltau_gh18139_overflow = _suite.test_kendalltau_gh18139_overflow
test_kendall_tau_large = _suite.test_kendall_tau_large


class TestKendallTauAlternative(_suite.TestKendallTauAlternative):  # type: ignore[misc, name-defined]
    """SciPy's exact/asymptotic alternative tests, inherited unchanged."""


def _kendall_names() -> list[str]:
    return sorted(
        name
        for name in dir(_suite)
        if "kendall" in name.lower() and (name.startswith("test") or name.startswith("Test"))
    )


def test_every_scipy_kendall_test_is_collected() -> None:
    # Fails when a SciPy upgrade adds a kendalltau test that is not re-exported above.
    here = importlib.import_module(__name__)
    missing = [name for name in _kendall_names() if not hasattr(here, name)]
    assert missing == []
