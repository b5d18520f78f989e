"""toxeval.stats.kendalltau against scipy.stats.kendalltau (SciPy 1.17.1).

Property tests compare values, result types, warnings and errors on tie-heavy and
tie-free data, across the exact/asymptotic switch, both variants, every
alternative and nan_policy, several dtypes and strided views; named cases cover
each edge listed in docs/metric-semantics.md (section 1.7, pitfall 12).

Values are compared for exact equality: with SciPy loaded, toxeval evaluates the
same float64 operations in the same order (see toxeval.metrics._kendall).
"""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest
import toxeval.stats as tstats
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from toxeval.metrics import SignificanceResult, SmallSampleWarning, kendalltau

ScipySmallSampleWarning = stats._axis_nan_policy.SmallSampleWarning


def _outcome(fun: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[tuple[type, str]]]:
    """Result (or exception type + message) and the warnings emitted."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out: Any = fun(*args, **kwargs)
        except Exception as exc:
            out = (type(exc), _norm_msg(str(exc)))
    return out, [(w.category, str(w.message)) for w in rec]


def _norm_msg(msg: str) -> str:
    # The order of a set in SciPy's nan_policy message depends on the hash seed.
    return re.sub(r"\{[^}]*\}", lambda m: str(sorted(m.group(0)[1:-1].split(", "))), msg)


def _assert_same(args: tuple[Any, ...], rtol: float = 0.0, **kwargs: Any) -> Any:
    ref, ref_w = _outcome(stats.kendalltau, *args, **kwargs)
    got, got_w = _outcome(kendalltau, *args, **kwargs)
    assert [m for _, m in got_w] == [m for _, m in ref_w]
    for (gc, _), (rc, _) in zip(got_w, ref_w, strict=True):
        assert issubclass(gc, rc)
    if isinstance(ref, tuple) and not isinstance(ref, stats._stats_py.SignificanceResult):
        assert got == ref
        return got
    assert isinstance(got, SignificanceResult)
    assert len(got) == 2
    for g, r in ((got.statistic, ref.statistic), (got.pvalue, ref.pvalue)):
        assert type(g) is type(r)
        assert np.asarray(g).dtype == np.asarray(r).dtype
        assert np.shape(g) == np.shape(r)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=0, equal_nan=True)
    np.testing.assert_array_equal(got.correlation, got.statistic)
    return got


few_values = st.lists(st.integers(0, 3), min_size=0, max_size=60)


@st.composite
def paired(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 60))
    kind = draw(st.sampled_from(["ties", "distinct", "mixed"]))
    if kind == "ties":
        k = draw(st.integers(1, 4))
        x = draw(st.lists(st.integers(0, k), min_size=n, max_size=n))
        y = draw(st.lists(st.integers(0, k), min_size=n, max_size=n))
    elif kind == "distinct":
        x = draw(st.permutations(list(range(n))))
        y = draw(st.permutations(list(range(n))))
    else:
        x = draw(st.permutations(list(range(n))))
        y = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


@settings(max_examples=examples(300), deadline=None)
@given(
    data=paired(),
    variant=st.sampled_from(["b", "c"]),
    alternative=st.sampled_from(["two-sided", "less", "greater"]),
    method=st.sampled_from(["auto", "auto", "asymptotic", "exact"]),
    dtype=st.sampled_from([np.float64, np.float32, np.int64]),
)
def test_matches_scipy(
    data: tuple[np.ndarray, np.ndarray], variant: str, alternative: str, method: str, dtype: Any
) -> None:
    x, y = (a.astype(dtype) for a in data)
    _assert_same((x, y), variant=variant, alternative=alternative, method=method)


@settings(max_examples=examples(200), deadline=None)
@given(
    data=paired(),
    nan_policy=st.sampled_from(["propagate", "omit", "raise"]),
    nan_x=st.lists(st.integers(0, 59), max_size=4),
    nan_y=st.lists(st.integers(0, 59), max_size=4),
    variant=st.sampled_from(["b", "c"]),
    f32=st.booleans(),
)
def test_nan_policies_match_scipy(
    data: tuple[np.ndarray, np.ndarray],
    nan_policy: str,
    nan_x: list[int],
    nan_y: list[int],
    variant: str,
    f32: bool,
) -> None:
    x, y = data
    x, y = x.copy(), y.copy()
    if f32:
        x, y = x.astype(np.float32), y.astype(np.float32)
    for i in nan_x:
        if i < x.size:
            x[i] = np.nan
    for i in nan_y:
        if i < y.size:
            y[i] = np.nan
    _assert_same((x, y), nan_policy=nan_policy, variant=variant)


@settings(max_examples=examples(200), deadline=None)
@given(
    rows=st.integers(1, 4),
    n=st.integers(0, 12),
    seed=st.integers(0, 2**32 - 1),
    axis=st.sampled_from([0, 1, -1, None]),
    keepdims=st.booleans(),
    nan_policy=st.sampled_from(["propagate", "omit", "raise"]),
    with_nan=st.booleans(),
)
def test_axis_matches_scipy(
    rows: int, n: int, seed: int, axis: int | None, keepdims: bool, nan_policy: str, with_nan: bool
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(rows, n)).astype(float)
    y = rng.integers(0, 4, size=(rows, n)).astype(float)
    if with_nan and x.size:
        x.flat[rng.integers(0, x.size)] = np.nan
    _assert_same((x, y), axis=axis, keepdims=keepdims, nan_policy=nan_policy)


def test_strided_and_fortran_views() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, size=(40, 6)).astype(float)
    b = np.asfortranarray(rng.normal(size=(40, 6)))
    _assert_same((a[::3, 1], b[::-3, 2]))
    _assert_same((a[:, ::2], b[:, ::2]))
    _assert_same((a.astype(np.float32)[::2, 0], b[::2, 0].astype(np.float32)))


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint32, np.uint64, np.float16, bool]
)
def test_other_dtypes(dtype: Any) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, size=50).astype(dtype)
    y = rng.integers(0, 100, size=50).astype(dtype)
    _assert_same((x, y))


def test_mixed_dtypes_promote_like_scipy() -> None:
    x = np.array([2**53, 2**53 + 1, 3], dtype=np.int64)
    _assert_same((x, np.array([1, 2, 3])))  # int64 stays exact
    _assert_same((x, np.array([1.0, 2.0, 3.0])))  # promoted to float64: tie
    _assert_same((np.array([1, 2, 3], np.int8), np.array([1, 2, 3.5], np.float32)))
    big = np.array([2**63, 2**64 - 1, 3], np.uint64)
    _assert_same((big, np.array([1, 2, 3], np.uint64)))


def test_strings_bools_objects_and_lists() -> None:
    _assert_same((["a", "b", "c", "b"], ["c", "b", "a", "a"]))
    _assert_same(([True, False, True, True], [1, 2, 3, 4]))
    _assert_same((np.array([1, "x", 2], dtype=object)[[0, 2]], np.array([3, 1])))
    _assert_same(([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]))
    _assert_same((5, 6))


# --- named cases ---------------------------------------------------------------


def test_docstring_example() -> None:
    res = _assert_same(([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]))
    assert res.statistic == pytest.approx(-0.47140452079103173, rel=1e-15)
    assert res.pvalue == pytest.approx(0.2827454599327748, rel=1e-13)


def test_exact_asymptotic_switch() -> None:
    # n <= 33 without ties: exact; n = 34: asymptotic unless min(dis, tot - dis) <= 1.
    for n in (33, 34, 60):
        x = np.arange(n)
        y = np.r_[1, 0, np.arange(2, n)]  # one discordant pair
        _assert_same((x, y))
        _assert_same((x, np.roll(x, 5)))
        _assert_same((x, x))
        _assert_same((x, x[::-1]), alternative="less")


def test_ties_and_exact_raise() -> None:
    got, _ = _outcome(kendalltau, [1, 2, 2, 4], [1, 2, 4, 3], method="exact")
    assert got == (ValueError, "Ties found, exact method cannot be used.")
    _assert_same(([1, 2, 2, 4], [1, 2, 4, 3]), method="exact")


def test_parameter_errors() -> None:
    got, _ = _outcome(kendalltau, [1, 2, 3, 4], [1, 2, 4, 3], method="bogus")
    assert got == (
        ValueError,
        "Unknown method bogus specified.  Use 'auto', 'exact' or 'asymptotic'.",
    )
    got, _ = _outcome(kendalltau, [1, 2, 3, 4], [1, 2, 4, 3], variant="a")
    assert got == (
        ValueError,
        "Unknown variant of the method chosen: a. variant must be 'b' or 'c'.",
    )
    got, _ = _outcome(kendalltau, [1, 2, 2, 4], [1, 2, 4, 3], alternative="bogus")
    assert got == (ValueError, "`alternative` must be 'less', 'greater', or 'two-sided'.")
    got, _ = _outcome(kendalltau, [1, 2, 3], [1, 2])
    assert got == (ValueError, "Array shapes are incompatible for broadcasting.")
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        kendalltau([1, 2, 3], [1, 2, 3], nan_policy="bogus")
    with pytest.raises(ValueError, match="The input contains nan values"):
        kendalltau([1, np.nan, 3], [1, 2, 3], nan_policy="raise")
    for args, kw in [
        (([1, 2, 3, 4], [1, 2, 4, 3]), {"method": "bogus"}),
        (([1, 2, 2, 4], [1, 2, 4, 3]), {"variant": "a"}),
        (([1, 1, 1], [1, 2, 3]), {"variant": "a"}),  # constant input returns before the check
        (([1, 2, 3], [1]), {}),  # too small before the size check
        (([1, np.nan, 3], [1, 2]), {}),  # NaN propagates before the size check
        (([1, np.nan, 3], [1, 2]), {"nan_policy": "omit"}),
        (([1, 2], [1, 2]), {"method": "asymptotic"}),
        (([1, 2, 3], [1, 2, 3]), {"nan_policy": "bogus"}),
    ]:
        _assert_same(args, **kw)


def test_exact_path_alternative_quirk() -> None:
    # On the exact path an unknown alternative is silently treated as 'less'.
    res = _assert_same(([1, 2, 3, 4], [1, 2, 4, 3]), alternative="bogus")
    less = kendalltau([1, 2, 3, 4], [1, 2, 4, 3], alternative="less")
    assert res.pvalue == less.pvalue


def test_constant_input_nan_without_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for variant in ("b", "c"):
            res = kendalltau([2, 2, 2], [1, 2, 3], variant=variant)
            assert np.isnan(res.statistic) and np.isnan(res.pvalue)
            assert type(res.statistic) is np.float64
    _assert_same((np.array([1, 1, 1], np.float32), np.array([1, 2, 3], np.float32)))


@pytest.mark.parametrize("args", [([], []), ([1], [2]), ([np.nan, 1.0], [1.0, 2.0])])
def test_small_samples_warn(args: tuple[list[float], list[float]]) -> None:
    kw = {"nan_policy": "omit"} if np.isnan(args[0]).any() else {}
    with pytest.warns(SmallSampleWarning, match="too small; all returned values will be NaN"):
        res = kendalltau(*args, **kw)
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)
    with pytest.warns(ScipySmallSampleWarning):  # bridged: SciPy is loaded
        kendalltau(*args, **kw)
    _assert_same(args, **kw)


def test_warning_class_without_scipy_is_runtime_warning() -> None:
    assert issubclass(SmallSampleWarning, RuntimeWarning)
    assert SmallSampleWarning.__name__ == "SmallSampleWarning"


def test_n2_and_tau_c_and_clipping() -> None:
    res = _assert_same(([1, 2], [2, 1]))
    assert (res.statistic, res.pvalue) == (-1.0, 1.0)
    res = _assert_same(([1, 1, 2], [1, 1, 2]), variant="c")
    assert res.statistic == pytest.approx(0.8888888888888888)
    res = _assert_same((np.arange(1000.0), -np.arange(1000.0)))
    assert res.statistic == -1.0
    _assert_same((np.arange(1000.0) % 3, np.arange(1000.0) % 3), variant="c")


def test_signed_zero_and_infinities() -> None:
    _assert_same((np.array([0.0, -0.0, 1.0]), np.array([1, 2, 3])))
    _assert_same((np.array([np.inf, -np.inf, 1.0, np.inf]), np.array([1, 2, 3, 4])))


def test_exact_large_n() -> None:
    x = np.arange(200)
    _assert_same((x, np.r_[1, 0, np.arange(2, 200)]), method="exact")
    rng = np.random.default_rng(5)
    _assert_same((rng.permutation(180), rng.permutation(180)), method="exact", alternative="less")


def test_masked_arrays() -> None:
    x = np.ma.masked_array([1, 2, 3, 4, 5, 6], [0, 1, 0, 0, 0, 0])
    _assert_same((x, [1, 3, 2, 6, 5, 4]))


def test_result_type_behaviour() -> None:
    res = kendalltau([1, 2, 3, 4], [1, 3, 2, 4])
    ref = stats.kendalltau([1, 2, 3, 4], [1, 3, 2, 4])
    tau, p = res
    assert isinstance(res, tuple) and len(res) == 2
    assert (tau, p) == (res.statistic, res.pvalue) == (res[0], res[1])
    assert res.correlation == tau
    assert type(tau) is np.float64 and type(p) is np.float64
    assert repr(res) == repr(ref)
    assert res._asdict() == ref._asdict()
    with pytest.raises(AttributeError):
        res.statistic = 1.0  # type: ignore[misc]
    clone = pickle.loads(pickle.dumps(res))
    assert clone == res and clone.correlation == res.correlation
    arr = kendalltau(np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3), axis=1)
    assert isinstance(arr.statistic, np.ndarray) and arr.statistic.shape == (2,)


def test_stats_module_reexport() -> None:
    assert tstats.kendalltau is kendalltau


def test_n_jobs_identical() -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(0, 50, size=300_000).astype(float)
    y = x + rng.integers(0, 20, size=x.size)
    a = kendalltau(x, y, n_jobs=1)
    b = kendalltau(x, y, n_jobs=2)
    assert (a.statistic, a.pvalue) == (b.statistic, b.pvalue)
    _assert_same((x, y))


def test_large_n_tie_block_overflow_safety() -> None:
    # 2M observations, one tie block of 1M in x: x1 ~ 2e18 (near int64's max in
    # SciPy's float moments), pair counts ~ 2e12.
    n = 2_000_000
    rng = np.random.default_rng(3)
    x = np.where(np.arange(n) < n // 2, 0.0, rng.normal(size=n))
    y = rng.integers(0, 1000, size=n).astype(np.int64)
    y[: n // 2] = -np.arange(n // 2)
    _assert_same((x, y))
    _assert_same((x, y), variant="c", alternative="greater")


def test_million_distinct() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=1_000_000)
    y = x + rng.normal(size=x.size)
    _assert_same((x, y))


@pytest.mark.parametrize(
    "kw",
    [
        {"axis": -1},
        {"axis": 0},
        {"axis": (0, 2)},
        {"axis": (1, 2), "keepdims": True},
        {"axis": None, "keepdims": True},
        {"axis": -1, "nan_policy": "omit"},
        {"axis": (0, 1), "nan_policy": "omit", "keepdims": True},
        {"axis": 3},
        {"axis": 1.5},
    ],
)
def test_3d_axes_and_tuples(kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (3, 4, 5)).astype(float)
    b = rng.integers(0, 4, (3, 4, 5)).astype(float)
    a[0, 1, 2] = np.nan
    _assert_same((a, b), **kw)


@pytest.mark.parametrize("axis", [-1, None])
def test_broadcasting_paired_samples(axis: int | None) -> None:
    rng = np.random.default_rng(1)
    _assert_same((rng.normal(size=(3, 1, 5)), rng.normal(size=(1, 4, 5))), axis=axis)


@pytest.mark.parametrize("kw", [{"axis": 1}, {"axis": 1, "nan_policy": "omit"}, {}])
def test_masked_with_nan(kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(2)
    m = np.ma.masked_array(rng.normal(size=(2, 6)), rng.random((2, 6)) < 0.3)
    m[0, 0] = np.nan
    _assert_same((m, rng.normal(size=(2, 6))), **kw)


def test_normal_tail_without_scipy_special(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without scipy.special loaded the tail uses math.erf/erfc (docs/deviations.md).
    rng = np.random.default_rng(8)
    cases = [
        (rng.integers(0, 5, 80), rng.integers(0, 5, 80)),
        (np.arange(300), np.arange(300) + rng.normal(scale=30, size=300)),
        (np.arange(3000), np.arange(3000)),  # far tail
    ]
    expected = [
        [stats.kendalltau(x, y, alternative=alt) for alt in ("two-sided", "less", "greater")]
        for x, y in cases
    ]
    monkeypatch.delitem(__import__("sys").modules, "scipy.special")
    for (x, y), refs in zip(cases, expected, strict=True):
        for alt, ref in zip(("two-sided", "less", "greater"), refs, strict=True):
            got = kendalltau(x, y, alternative=alt)
            assert got.statistic == ref.statistic
            np.testing.assert_allclose(got.pvalue, ref.pvalue, rtol=1e-12, atol=0)


def test_import_does_not_load_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, warnings\n"
        "import toxeval.stats as s\n"
        "assert 'scipy' not in sys.modules, 'scipy imported'\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    r = s.kendalltau([1], [2])\n"
        "assert w[0].category is s.SmallSampleWarning, w[0].category\n"
        "assert issubclass(w[0].category, RuntimeWarning)\n"
        "r = s.kendalltau([1, 2, 3, 5, 4] * 10, list(range(50)))\n"
        "assert 'scipy' not in sys.modules\n"
        "print(repr(r.pvalue))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    ref = stats.kendalltau([1, 2, 3, 5, 4] * 10, list(range(50))).pvalue
    np.testing.assert_allclose(float(out.strip().removeprefix("np.float64(")[:-1]), ref, rtol=1e-12)
