"""toxeval.streaming: mergeable states equal the in-memory figures.

Property tests (hypothesis, small inputs): any split of any input (ties, masks,
weights, degenerate and all-unknown labels, empty parts), updated chunk by chunk and
merged in any order, gives ``multilabel_report`` of the whole (counts exactly, floats
to 1e-12 relative), with the same warnings and errors; pickled and saved states are
equal to the originals; runs fed range by range to ``RunsReducer`` give scikit-learn's
AP and ROC AUC. The raw buffer is flushed after every chunk in some examples
(``FLUSH_MIN_BYTES`` patched down) so that the sorted-merge path is exercised too.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import toxeval.streaming.accumulator as accumulator_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score
from toxeval.metrics import multilabel_report
from toxeval.streaming import LabelRuns, MultilabelAccumulator, RunsReducer, score_keys
from toxeval.streaming.runs import range_numbers

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

INT_KEYS = (
    "n_samples",
    "n_labels",
    "n_rows_without_known_label",
    "support",
    "n_negative",
    "n_unknown",
)


def assert_reports_equal(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        if key in INT_KEYS:
            assert np.array_equal(np.asarray(g), np.asarray(w)), key
        else:
            np.testing.assert_allclose(
                np.asarray(g, dtype=float),
                np.asarray(w, dtype=float),
                rtol=1e-12,
                atol=1e-15,
                equal_nan=True,
                err_msg=key,
            )


def outcome(fn: Any) -> tuple[Any, list[tuple[type, str]]]:
    """``fn()``'s result (or the exception's type and message) and its warnings
    (scikit-learn's; NumPy's RuntimeWarnings of the in-memory arithmetic on empty
    input, e.g. "Mean of empty slice", are not part of the contract)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            result: Any = fn()
        except (ValueError, ZeroDivisionError) as e:
            result = (type(e), str(e))
    seen = {(w.category, str(w.message)) for w in rec if w.category is not RuntimeWarning}
    return result, sorted(seen, key=str)


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(0, 24))
    k = draw(st.integers(2, 4))
    levels = draw(st.sampled_from([2, 3, 7, 1000]))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    s = (rng.integers(0, levels, (n, k)) - levels // 2).astype(dtype)
    if dtype != np.int64:
        s = (s / levels).astype(dtype)
        s[rng.random((n, k)) < 0.1] = -0.0  # ties 0.0
    y = (rng.random((n, k)) < draw(st.sampled_from([0.0, 0.3, 1.0, 0.5]))).astype(np.int64)
    if n and draw(st.booleans()):
        y[:, 0] = 0  # a label without positives
    mask = None
    if draw(st.booleans()):
        mask = rng.random((n, k)) < 0.75
        if draw(st.booleans()):
            mask[:, -1] = False  # an all-unknown label
        if n and draw(st.booleans()):
            mask[0] = False  # a row without a known label
    w = None
    if draw(st.booleans()):
        w = rng.choice([0.0, 0.5, 1.0, 2.0, 0.3], size=n)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    return {"y": y, "s": s, "mask": mask, "w": w, "cuts": cuts, "threshold": 0.5}


def parts_of(p: dict[str, Any]) -> list[dict[str, Any]]:
    bounds = [0, *p["cuts"], p["y"].shape[0]]
    out = []
    for a, b in itertools.pairwise(bounds):
        out.append(
            {
                "y": p["y"][a:b],
                "s": p["s"][a:b],
                "mask": None if p["mask"] is None else p["mask"][a:b],
                "w": None if p["w"] is None else p["w"][a:b],
            }
        )
    return out


def accumulate(part: dict[str, Any], k: int) -> MultilabelAccumulator:
    acc = MultilabelAccumulator(k)
    acc.update(part["y"], part["s"], mask=part["mask"], sample_weight=part["w"])
    return acc


def in_memory(p: dict[str, Any]) -> Any:
    return outcome(lambda: multilabel_report(p["y"], p["s"], mask=p["mask"], sample_weight=p["w"]))


@SETTINGS
@given(problems(), st.randoms(use_true_random=False), st.booleans())
def test_any_split_merged_in_any_order_equals_multilabel_report(
    p: dict[str, Any], rnd: Any, flush_often: bool
) -> None:
    want, want_warnings = in_memory(p)
    k = p["y"].shape[1]
    with mock.patch.object(accumulator_module, "FLUSH_MIN_BYTES", 1 if flush_often else 16 << 20):
        states = [accumulate(part, k) for part in parts_of(p)]
        rnd.shuffle(states)
        # A random binary tree of merges.
        while len(states) > 1:
            i = rnd.randrange(len(states) - 1)
            a, b = states[i], states.pop(i + 1)
            states[i] = a.merge(b) if rnd.random() < 0.5 else b.merge(a)
        got, got_warnings = outcome(states[0].compute)
    assert got_warnings == want_warnings
    if isinstance(want, tuple):
        assert got == want
    else:
        assert_reports_equal(got, want)


@SETTINGS
@given(problems(), st.booleans())
def test_updates_then_pickle_and_save_equal_multilabel_report(
    p: dict[str, Any], flush_often: bool
) -> None:
    want, want_warnings = in_memory(p)
    k = p["y"].shape[1]
    with mock.patch.object(accumulator_module, "FLUSH_MIN_BYTES", 1 if flush_often else 16 << 20):
        acc = MultilabelAccumulator()
        for part in parts_of(p):
            acc.update(part["y"], part["s"], mask=part["mask"], sample_weight=part["w"])
        assert acc.n_samples == p["y"].shape[0]
        assert acc.n_labels == k
        copy = pickle.loads(pickle.dumps(acc))
    arrays, again = acc.to_arrays(), copy.to_arrays()
    assert set(arrays) == set(again)
    for name in arrays:
        assert np.array_equal(arrays[name], again[name]), name
    for state in (acc, copy):
        got, got_warnings = outcome(state.compute)
        assert got_warnings == want_warnings
        if isinstance(want, tuple):
            assert got == want
        else:
            assert_reports_equal(got, want)


def test_save_load_round_trip_and_refuses_to_overwrite(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    y = rng.random((500, 5)) < 0.3
    s = rng.random((500, 5)).astype(np.float32)
    acc = MultilabelAccumulator(threshold=np.float32(0.4))
    acc.update(y, s, sample_weight=rng.random(500))
    acc.update(y, s, mask=rng.random((500, 5)) < 0.5)
    path = tmp_path / "state.npz"
    acc.save(path)
    loaded = MultilabelAccumulator.load(path)
    assert loaded.threshold == acc.threshold and type(loaded.threshold) is np.float32
    assert_reports_equal(loaded.compute(), acc.compute())
    with pytest.raises(FileExistsError):
        acc.save(path)
    acc.save(path, overwrite=True)
    # float32 keys are stored in 4 bytes, unit weights in 1.
    with np.load(path) as z:
        assert z["runs.keys"].dtype == np.uint32
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    with pytest.raises(ValueError):
        MultilabelAccumulator.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", meta=np.array('{"format": "x"}'))
    with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state"):
        MultilabelAccumulator.load(tmp_path / "other.npz")


def _saved_state(tmp_path: Path) -> tuple[MultilabelAccumulator, Path]:
    rng = np.random.default_rng(11)
    acc = MultilabelAccumulator()
    acc.update(rng.random((60, 4)) < 0.3, rng.random((60, 4)))
    path = tmp_path / "state.npz"
    acc.save(path)
    return acc, path


@pytest.mark.parametrize("cut", [0, 10, 0.5, -10, -1])
def test_load_of_a_truncated_file_is_a_value_error(tmp_path: Path, cut: float) -> None:
    _, path = _saved_state(tmp_path)
    data = path.read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else (cut % len(data) if cut else 0)
    path.write_bytes(data[:n])
    with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state") as e:
        MultilabelAccumulator.load(path)
    assert "allow_pickle" not in str(e.value)


def test_load_of_a_corrupted_file_or_plain_npy_is_a_value_error(tmp_path: Path) -> None:
    _, path = _saved_state(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside an array: the zip's CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state"):
        MultilabelAccumulator.load(path)
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state"):
        MultilabelAccumulator.load(tmp_path / "one.npy")
    (tmp_path / "pickled.npz").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state"):
        MultilabelAccumulator.load(tmp_path / "pickled.npz")


def _tampered(arrays: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    out = dict(arrays)
    out[key] = value
    return out


def test_from_arrays_refuses_tampered_or_mismatched_arrays(tmp_path: Path) -> None:
    acc, _ = _saved_state(tmp_path)
    a = acc.to_arrays()
    other = MultilabelAccumulator()
    other.update(np.eye(4, dtype=bool)[[0, 1, 2, 3, 0]], np.eye(4)[[0, 1, 2, 3, 1]])
    meta = json.loads(str(a["meta"][()]))
    bad = [
        _tampered(a, "runs.n_pos", a["runs.n_pos"][:2]),  # was an IndexError
        _tampered(a, "runs.keys", a["runs.keys"].astype(np.float64)),  # keys rounded
        _tampered(a, "runs.offsets", a["runs.offsets"] + 0.5),
        _tampered(a, "meta", np.array("[]")),  # was an AttributeError
        _tampered(a, "meta", np.array(json.dumps({**meta, "keep_runs": "no"}))),
        _tampered(a, "meta", np.array(json.dumps({**meta, "n_labels": 3}))),
        _tampered(a, "totals.support", a["totals.support"].astype(str)),
        _tampered(a, "totals.support", -a["totals.support"] - 1),
        _tampered(a, "totals.tp", a["totals.tp"] + 1000),
        _tampered(a, "totals.counts", np.array([4, 60, 61, 0])),
        # Runs of other rows under these totals: their counts do not match.
        {**a, **{k: v for k, v in other.to_arrays().items() if k.startswith("runs.")}},
    ]
    for arrays in bad:
        with pytest.raises(ValueError, match="not a saved MultilabelAccumulator state"):
            MultilabelAccumulator.from_arrays(arrays)
    assert_reports_equal(MultilabelAccumulator.from_arrays(a).compute(), acc.compute())


def test_merge_leaves_other_unchanged_and_handles_itself() -> None:
    rng = np.random.default_rng(2)
    y, s = rng.random((40, 3)) < 0.5, rng.random((40, 3))
    a, b = MultilabelAccumulator(), MultilabelAccumulator()
    a.update(y[:20], s[:20])
    b.update(y[20:], s[20:])
    before = b.to_arrays()
    assert a.merge(b) is a
    after = b.to_arrays()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert_reports_equal(a.compute(), multilabel_report(y, s))
    twice = MultilabelAccumulator()
    twice.update(y, s)
    twice.merge(twice)
    assert_reports_equal(twice.compute(), multilabel_report(np.vstack([y, y]), np.vstack([s, s])))


def test_updates_must_agree_and_inputs_are_copied() -> None:
    acc = MultilabelAccumulator()
    y = np.array([[1, 0, 1], [0, 1, 0]])
    s = np.array([[0.9, 0.1, 0.4], [0.2, 0.8, 0.3]])
    acc.update(y, s)
    want = multilabel_report(np.vstack([y, y]), np.vstack([s, s]))
    acc2 = MultilabelAccumulator()
    acc2.update(y, s)
    s[:] = 0.0  # reused buffer: the state kept its own copy
    acc2.update(y, np.array([[0.9, 0.1, 0.4], [0.2, 0.8, 0.3]]))
    assert_reports_equal(acc2.compute(), want)
    with pytest.raises(ValueError, match="this accumulator has 3"):
        acc.update(np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="earlier updates were float64"):
        acc.update(y, s.astype(np.float32))
    with pytest.raises(ValueError, match="different shape"):
        acc.update(y, s[:, :2])
    with pytest.raises(ValueError, match="Input contains NaN"):
        acc.update(y, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="thresholds"):
        acc.merge(MultilabelAccumulator(threshold=0.3))
    other = MultilabelAccumulator()
    other.update(np.ones((1, 4)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="labels"):
        acc.merge(other)
    with pytest.raises(ValueError, match="at least one update"):
        MultilabelAccumulator().compute()
    acc.reset()
    assert acc.n_samples == 0 and acc.n_labels is None
    acc.update(np.ones((2, 4)), np.ones((2, 4)))  # a new shape after reset
    assert acc.n_labels == 4


class DLPackOnly:
    """A tensor-like object with ``__dlpack__`` and no ``__array__`` (a CPU tensor of
    a framework NumPy only reads through DLPack)."""

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, **kw: Any) -> Any:
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self) -> Any:
        return self._a.__dlpack_device__()


def test_dlpack_and_array_interface_inputs() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random((30, 4)) < 0.4).astype(np.int64)
    s = rng.random((30, 4)).astype(np.float32)
    w = rng.random(30)
    acc = MultilabelAccumulator()
    acc.update(DLPackOnly(y), DLPackOnly(s), sample_weight=DLPackOnly(w))
    assert not hasattr(DLPackOnly(y), "__array__")
    assert_reports_equal(acc.compute(), multilabel_report(y, s, sample_weight=w))


def test_keep_runs_false_takes_figures_from_elsewhere() -> None:
    rng = np.random.default_rng(4)
    y, s = rng.random((50, 3)) < 0.4, rng.random((50, 3))
    full = MultilabelAccumulator()
    full.update(y, s)
    small = MultilabelAccumulator(keep_runs=False)
    small.update(y, s)
    assert small.nbytes < 1000
    with pytest.raises(ValueError, match="keep_runs=False"):
        small.compute()
    runs = full.label_runs()
    figures = [r.figures() for r in runs]
    micro = LabelRuns.merge_all(runs).figures()
    from toxeval.streaming import BinaryFigures

    binary = BinaryFigures(
        ap=np.array([f.ap for f in figures]),
        roc_auc=np.array([f.roc_auc for f in figures]),
        ap_flags=np.array([f.ap_flags for f in figures], dtype=np.uint8),
        roc_auc_flags=np.array([f.roc_auc_flags for f in figures], dtype=np.uint8),
        ap_micro=micro.ap,
        roc_auc_micro=micro.roc_auc,
        ap_micro_flags=micro.ap_flags,
        roc_auc_micro_flags=micro.roc_auc_flags,
    )
    assert_reports_equal(small.compute(binary=binary), multilabel_report(y, s))


@st.composite
def binary_problems(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    levels = draw(st.sampled_from([2, 4, 50, 10**6]))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    s = (rng.integers(0, levels, n) / levels).astype(dtype)
    y = rng.random(n) < 0.4
    y[rng.integers(0, n)] = True
    y[rng.integers(0, n)] = False
    w = rng.choice([0.0, 0.25, 1.0, 3.0], size=n) if draw(st.booleans()) else None
    mask = rng.random(n) < 0.8 if draw(st.booleans()) else None
    n_ranges = draw(st.integers(1, 5))
    return {"s": s, "y": y, "w": w, "mask": mask, "n_ranges": n_ranges}


@SETTINGS
@given(binary_problems())
def test_runs_fed_range_by_range_equal_sklearn(p: dict[str, Any]) -> None:
    s, y, w, mask = p["s"], p["y"], p["w"], p["mask"]
    keep = np.ones(s.shape, bool) if mask is None else mask
    ys, ss = y[keep], s[keep]
    ws = None if w is None else w[keep]
    # Range boundaries on the order keys (from the kept scores, like a sample).
    keys = score_keys(s)
    splitters = np.unique(keys)[:: max(1, len(np.unique(keys)) // p["n_ranges"])][1:]
    bounds = [np.uint64(0), *splitters, None]
    red = RunsReducer()
    for lo, hi in reversed(list(itertools.pairwise(bounds))):
        rows = (keys >= lo) & (keys < hi) if hi is not None else keys >= lo
        red.feed(
            LabelRuns.from_scores(
                y[rows],
                s[rows],
                mask=None if mask is None else mask[rows],
                sample_weight=None if w is None else w[rows],
            )
        )
    got = red.result()
    whole = LabelRuns.from_scores(y, s, mask=mask, sample_weight=w)
    assert whole.figures() == pytest.approx(got, rel=1e-12, nan_ok=True)
    assert pickle.loads(pickle.dumps(whole)) == whole
    if ys.size == 0:
        assert np.isnan(got.ap) and np.isnan(got.roc_auc)
        return
    nonzero = np.ones(ys.shape, bool) if ws is None else ws != 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if nonzero.any():
            ap = average_precision_score(ys, ss, sample_weight=ws)
            assert got.ap == pytest.approx(ap, rel=1e-12, abs=1e-15)
        if (ys & nonzero).any() and (~ys & nonzero).any():
            auc = roc_auc_score(ys, ss, sample_weight=ws)
            assert got.roc_auc == pytest.approx(auc, rel=1e-12, abs=1e-15)


@SETTINGS
@given(binary_problems())
def test_ranges_reduced_apart_and_joined_equal_one_reducer(p: dict[str, Any]) -> None:
    """Each range reduced on its own from the weight above it (``RunsReducer.below``,
    in any order, pickled between) and joined highest first (``then``) gives the
    figures of one reducer fed every range, hence scikit-learn's."""
    s, y, w, mask = p["s"], p["y"], p["w"], p["mask"]
    keys = score_keys(s)
    splitters = np.unique(keys)[:: max(1, len(np.unique(keys)) // p["n_ranges"])][1:]
    bounds = [np.uint64(0), *splitters, None]
    pieces = []
    for lo, hi in reversed(list(itertools.pairwise(bounds))):
        rows = (keys >= lo) & (keys < hi) if hi is not None else keys >= lo
        pieces.append(
            LabelRuns.from_scores(
                y[rows],
                s[rows],
                mask=None if mask is None else mask[rows],
                sample_weight=None if w is None else w[rows],
            )
        )
    above = np.cumsum([0.0] + [float(r.pos.sum()) for r in pieces])
    above_neg = np.cumsum([0.0] + [float(r.neg.sum()) for r in pieces])
    apart = [
        pickle.loads(pickle.dumps(RunsReducer.below(above[i], above_neg[i]).feed(r)))
        for i, r in reversed(list(enumerate(pieces)))
    ][::-1]
    joined = RunsReducer()
    for red in apart:
        joined.then(red)
    one = RunsReducer()
    for r in pieces:
        one.feed(r)
    assert joined.result() == pytest.approx(one.result(), rel=1e-12, nan_ok=True)
    assert (joined.n_pos, joined.n_neg) == (one.n_pos, one.n_neg)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint8])
def test_range_numbers_equal_searchsorted_of_the_keys(dtype: Any) -> None:
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 200, 5000)
    s = (raw / 7).astype(dtype) if np.dtype(dtype).kind == "f" else raw.astype(dtype)
    if np.dtype(dtype).kind == "f":
        s[:3] = [-0.0, 0.0, -1.5]
    keys = score_keys(s)
    for n_bounds in (0, 1, 7, 150):
        bounds = np.unique(rng.choice(keys, n_bounds)) if n_bounds else keys[:0]
        want = np.searchsorted(bounds, keys, side="right")
        got = range_numbers(s, bounds)
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, want)
    # misaligned buffers (as Dask unpickles them from a network frame) are read too
    raw_s = bytearray(s.nbytes + 1)
    odd_s = np.frombuffer(raw_s, dtype=s.dtype, count=s.size, offset=1)
    odd_s[:] = s
    raw_b = bytearray(bounds.nbytes + 1)
    odd_b = np.frombuffer(raw_b, dtype=np.uint64, count=bounds.size, offset=1)
    odd_b[:] = bounds
    np.testing.assert_array_equal(range_numbers(odd_s, odd_b), want)
    with pytest.raises(ValueError, match="1-D"):
        range_numbers(np.zeros((2, 2)), keys[:1])
    if np.dtype(dtype).kind == "f":
        with pytest.raises(ValueError, match="NaN"):
            range_numbers(np.array([0.5, np.nan], dtype=dtype), keys[:1])


def test_reducers_of_different_dtypes_are_not_joined() -> None:
    hi = RunsReducer().feed(LabelRuns.from_scores([1, 0], [0.9, 0.8]))
    lo = RunsReducer.below(1.0, 1.0).feed(
        LabelRuns.from_scores([1, 0], np.array([0.2, 0.1], dtype=np.float32))
    )
    with pytest.raises(ValueError, match="different score dtypes"):
        hi.then(lo)


def test_reducer_refuses_runs_out_of_order_and_mixed_dtypes() -> None:
    hi = LabelRuns.from_scores([1, 0], [0.9, 0.8])
    lo = LabelRuns.from_scores([1, 0], [0.2, 0.1])
    red = RunsReducer().feed(lo)
    with pytest.raises(ValueError, match="descending score order"):
        red.feed(hi)
    with pytest.raises(ValueError, match="float32"):
        RunsReducer().feed(hi).feed(LabelRuns.from_scores([1], np.array([0.1], np.float32)))
    with pytest.raises(ValueError, match="different score dtypes"):
        hi.merge(LabelRuns.from_scores([1], np.array([0.1], np.float32)))
    with pytest.raises(ValueError, match="strictly descending"):
        LabelRuns([1, 2], [1.0, 0.0], [0.0, 1.0], n_pos=1, n_neg=1, score_kind="float64")
    assert LabelRuns.empty().figures().ap != LabelRuns.empty().figures().ap  # NaN


def test_score_keys_order_and_ties() -> None:
    k = score_keys(np.array([-1.0, -0.0, 0.0, 0.5, np.finfo(np.float64).max]))
    assert k[1] == k[2] and np.all(np.diff(k.astype(np.float64)[[0, 1, 3, 4]]) > 0)
    k32 = score_keys(np.array([0.1, 0.2], np.float32))
    assert k32.max() < 2**32 and k32[0] < k32[1]
    big = score_keys(np.array([2**64 - 1, 3], np.uint64))
    assert big[0] > big[1]


DOC = Path(__file__).resolve().parents[1] / "docs" / "streaming.md"


def _doc_blocks() -> list[str]:
    if not DOC.is_file():  # tests run against an installed package, away from the repo
        return []
    parts = DOC.read_text(encoding="utf-8").split("```python\n")[1:]
    blocks = [p.split("```", 1)[0] for p in parts]
    return [b for b in blocks if not b.startswith("# requires:")]


@pytest.mark.parametrize("block", _doc_blocks() or [pytest.param("", marks=pytest.mark.skip)])
def test_docs_streaming_examples_run_and_print_what_they_show(
    block: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(block, str(DOC), "exec"), {"__name__": "docs_streaming"})
    shown = [line.split("# -> ", 1)[1] for line in block.splitlines() if line.startswith("# -> ")]
    assert capsys.readouterr().out.splitlines() == shown
    assert len(_doc_blocks()) == 3


def test_updates_from_several_threads_lose_no_rows() -> None:
    # Flushing after every chunk and switching threads often makes interleavings
    # likely: an unserialised `+=` on the totals or a flush racing an append lost rows.
    rng = np.random.default_rng(12)
    y, s = rng.random((20_000, 5)) < 0.3, np.round(rng.random((20_000, 5)), 2)
    want = multilabel_report(y, s)
    chunks = [slice(i, i + 100) for i in range(0, 20_000, 100)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with mock.patch.object(accumulator_module, "FLUSH_MIN_BYTES", 1):
            for _ in range(4):
                acc = MultilabelAccumulator()
                other = MultilabelAccumulator()
                other.update(y[:0], s[:0])

                def work(
                    cs: list[slice],
                    acc: MultilabelAccumulator = acc,
                    other: MultilabelAccumulator = other,
                ) -> None:
                    for c in cs:
                        acc.update(y[c], s[c])
                        acc.merge(other)

                threads = [threading.Thread(target=work, args=(chunks[i::4],)) for i in range(4)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert_reports_equal(acc.compute(), want)
    finally:
        sys.setswitchinterval(old)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_another_thread_updates_gives_a_usable_state() -> None:
    # The fork waits for the change under way; the child's accumulator is whole and
    # unlocked (before: its lock was held by a thread that does not exist there).
    rng = np.random.default_rng(13)
    y, s = rng.random((400, 3)) < 0.5, rng.random((400, 3))
    acc = MultilabelAccumulator()
    acc.update(y[:200], s[:200])
    held = threading.Event()

    def hold() -> None:
        with acc._lock:
            held.set()
            time.sleep(0.3)

    t = threading.Thread(target=hold)
    t.start()
    assert held.wait(timeout=5)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        signal.alarm(10)
        ok = False
        try:
            acc.update(y[200:], s[200:])
            ok = np.allclose(acc.compute()["ap"], multilabel_report(y, s)["ap"], rtol=1e-12)
        finally:
            os._exit(0 if ok else 3)
    t.join()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    acc.update(y[200:], s[200:])
    assert_reports_equal(acc.compute(), multilabel_report(y, s))
