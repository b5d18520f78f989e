"""SciPy's own kendalltau tests, run against toxeval.

The installed ``scipy/stats/tests/test_stats.py`` is imported as a module; its
``stats`` global is swapped (per test, by an autouse fixture) for a proxy that
exposes toxeval's ``kendalltau`` and delegates every other name to
``scipy.stats``. The kendalltau test functions and classes are then re-collected
here, so each runs unchanged against toxeval. The generic decorator tests of
``scipy/stats/tests/test_axis_nan_policy.py`` (which take the function under
test as a parameter) are run for toxeval's kendalltau too. Tests that cannot
pass are listed, with the reason, in docs/deviations.md (section "kendalltau");
currently there are none.
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


# --- scipy/stats/tests/test_axis_nan_policy.py, kendalltau case ----------------
# These generic tests take the function under test as a parameter; they are
# called here with toxeval's kendalltau. Their reference implementation calls
# the *undecorated* function (`_no_deco=True`), which `kendalltau` below maps to
# toxeval's undecorated body.

_anp = pytest.importorskip("scipy.stats.tests.test_axis_nan_policy")
_CASE = next(c for c in _anp.axis_nan_policy_cases if c[0] is scipy.stats.kendalltau)
_ARGS, _KWDS, _N_SAMPLES, _N_OUTPUTS, _PAIRED, _UNPACKER = _CASE[1:]


def kendalltau(*args: Any, _no_deco: bool = False, **kwds: Any) -> Any:
    """toxeval's kendalltau; `_no_deco=True` runs its undecorated 1-D body."""
    if not _no_deco:
        return toxeval.stats.kendalltau(*args, **kwds)
    from toxeval.metrics._axis_nan_policy import pack_result
    from toxeval.metrics._kendall import kendalltau_1d

    kwds.pop("nan_policy", None)
    x, y = args
    out = kendalltau_1d(
        x,
        y,
        kwds.pop("method", "auto"),
        kwds.pop("variant", "b"),
        kwds.pop("alternative", "two-sided"),
        None,
    )
    return pack_result(*out)


_COMMON = {
    "args": _ARGS,
    "kwds": _KWDS,
    "n_samples": _N_SAMPLES,
    "n_outputs": _N_OUTPUTS,
    "paired": _PAIRED,
    "unpacker": _UNPACKER,
}


@pytest.mark.parametrize("nan_policy", ["propagate", "omit", "raise"])
@pytest.mark.parametrize("axis", range(-3, 3))
@pytest.mark.parametrize("data_generator", ["all_nans", "all_finite", "mixed"])
def test_axis_nan_policy_full(nan_policy: str, axis: int, data_generator: str) -> None:
    # SciPy runs the axis=1 / 'mixed' subset by default ("fast") and this full
    # grid with SCIPY_XSLOW; for one function it is quick.
    _anp._axis_nan_policy_test(
        kendalltau,
        _ARGS,
        _KWDS,
        _N_SAMPLES,
        _N_OUTPUTS,
        _PAIRED,
        _UNPACKER,
        nan_policy,
        axis,
        data_generator,
    )


@pytest.mark.parametrize("nan_policy", ["propagate", "omit", "raise"])
@pytest.mark.parametrize("data_generator", ["all_nans", "all_finite", "mixed", "empty"])
def test_axis_nan_policy_axis_is_None(nan_policy: str, data_generator: str) -> None:
    _anp.test_axis_nan_policy_axis_is_None(
        hypotest=kendalltau, nan_policy=nan_policy, data_generator=data_generator, **_COMMON
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
@pytest.mark.parametrize(
    ("sample_shape", "axis_cases"),
    [
        ((2, 3, 3, 4), (None, 0, -1, (0, 2), (1, -1), (3, 1, 2, 0))),
        ((10,), (0, -1)),
        ((20, 0), (0, 1)),
    ],
)
def test_keepdims(
    sample_shape: tuple[int, ...], axis_cases: tuple[Any, ...], nan_policy: str
) -> None:
    _anp.test_keepdims(
        hypotest=kendalltau,
        sample_shape=sample_shape,
        axis_cases=axis_cases,
        nan_policy=nan_policy,
        **_COMMON,
    )


def test_axis_nan_policy_decorated_pickled() -> None:
    _anp.test_axis_nan_policy_decorated_pickled(hypotest=kendalltau, **_COMMON)


def test_empty() -> None:
    _anp.test_empty(hypotest=kendalltau, **_COMMON)


@pytest.mark.parametrize("axis", [0, 1])
def test_non_broadcastable(axis: int) -> None:
    _anp.test_non_broadcastable(hypotest=kendalltau, axis=axis, **_COMMON)
