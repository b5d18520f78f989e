"""``toxeval.dask`` against the in-memory functions on a real two-process
``LocalCluster`` (states cross process boundaries): random inputs with ties, masks,
weights, degenerate labels, empty and uneven blocks, as dask arrays and dataframes;
the warnings; a worker killed mid-computation. Skipped where Dask is not installed.
"""

from __future__ import annotations

import itertools
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import pandas as pd  # noqa: E402
import toxeval.dask as td  # noqa: E402
from toxeval import metrics as tm  # noqa: E402
from toxeval.streaming import LabelRuns  # noqa: E402

ROW_METRICS = (
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "ndcg_score",
)
AVERAGES = (None, "macro", "weighted", "micro", "samples")


def _problem(seed: int, n: int, k: int, *, masked: bool, weighted: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int8)
    y[:, 0] = 0  # a label without positives (undefined AP/ROC AUC warnings)
    if k > 2:
        y[:, 1] = 1  # a label without negatives
    s = np.round(rng.random((n, k)), 1)  # ties within and across blocks
    m = rng.random((n, k)) < 0.8 if masked else None
    if m is not None and n > 2:
        m[1, :] = False  # a row without a known label
    w = rng.random(n) if weighted else None
    if w is not None and n > 3:
        w[:3] = 0.0  # zero weights
    return {"y": y, "s": s, "m": m, "w": w}


def _chunked(p: dict[str, Any], cuts: list[int]) -> dict[str, Any]:
    """Dask arrays with row blocks at ``cuts`` (empty blocks where cuts repeat)."""
    n = p["y"].shape[0]
    edges = [0, *sorted(min(c, n) for c in cuts), n]
    rows = tuple(b - a for a, b in itertools.pairwise(edges))

    def arr(a: Any) -> Any:
        return None if a is None else da.from_array(a, chunks=(rows, *a.shape[1:]))

    return {key: arr(v) for key, v in p.items()}


def _same(a: Any, b: Any) -> None:
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        assert a == b
        return
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=0)


def _call(func: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            value = func(*args, **kwargs)
        except Exception as e:  # the in-memory error must be the distributed one
            value = (type(e), str(e))
    return value, [(w.category, str(w.message)) for w in seen]


def _compare_all(p: dict[str, Any], d: dict[str, Any]) -> None:
    kw0 = {"mask": p["m"], "sample_weight": p["w"]}
    kw1 = {"mask": d["m"], "sample_weight": d["w"]}
    r0, w0 = _call(tm.multilabel_report, p["y"], p["s"], **kw0)
    r1, w1 = _call(td.multilabel_report, d["y"], d["s"], **kw1)
    assert w1 == w0
    if isinstance(r0, tuple):  # an error: the same one
        assert r1 == r0
    else:
        assert set(r1) == set(r0)
        for key in r0:
            _same(r1[key], r0[key])
    for name in ROW_METRICS:
        v0, w0 = _call(getattr(tm, name), p["y"], p["s"], **kw0)
        v1, w1 = _call(getattr(td, name), d["y"], d["s"], **kw1)
        assert (w1, type(v1)) == (w0, type(v0)), name
        if isinstance(v0, tuple):
            assert v1 == v0, name
        else:
            _same(v1, v0)
    for name in ("average_precision_score", "roc_auc_score"):
        for avg in AVERAGES:
            v0, w0 = _call(getattr(tm, name), p["y"], p["s"], average=avg, **kw0)
            v1, w1 = _call(getattr(td, name), d["y"], d["s"], average=avg, **kw1)
            assert w1 == w0, (name, avg)
            if isinstance(v0, tuple):
                assert v1 == v0, (name, avg)
            else:
                _same(v1, v0)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 300),
    k=st.integers(2, 5),
    cuts=st.lists(st.integers(0, 300), max_size=6),
    masked=st.booleans(),
    weighted=st.booleans(),
)
def test_arrays_equal_in_memory(
    dask_cluster: Any, seed: int, n: int, k: int, cuts: list[int], masked: bool, weighted: bool
) -> None:
    p = _problem(seed, n, k, masked=masked, weighted=weighted)
    _compare_all(p, _chunked(p, cuts))


def test_dataframes_equal_in_memory(dask_cluster: Any) -> None:
    p = _problem(7, 400, 4, masked=True, weighted=True)
    labels = [f"l{j}" for j in range(4)]
    frame = pd.DataFrame(p["y"], columns=labels)
    for j, c in enumerate(labels):
        frame[f"s_{c}"] = p["s"][:, j]
        frame[f"m_{c}"] = p["m"][:, j]
    frame["w"] = p["w"]
    df = dd.from_pandas(frame, npartitions=5)
    cols = {
        "y": df[labels],
        "s": df[[f"s_{c}" for c in labels]],
        "m": df[[f"m_{c}" for c in labels]],
        "w": df["w"],
    }
    _compare_all(p, cols)


def test_float32_and_one_label(dask_cluster: Any) -> None:
    p = _problem(3, 200, 3, masked=False, weighted=False)
    s32 = (p["s"] + np.float32(1e-9)).astype(np.float32)
    y, s = da.from_array(p["y"], chunks=(50, 3)), da.from_array(s32, chunks=(70, 3))
    r0, r1 = tm.multilabel_report(p["y"], s32), td.multilabel_report(y, s)
    for key in r0:
        _same(r1[key], r0[key])
    _same(
        td.average_precision_score(y[:, 2], s[:, 2]),
        tm.average_precision_score(p["y"][:, 2], s32[:, 2]),
    )
    _same(td.roc_auc_score(y[:, 2], s[:, 2]), tm.roc_auc_score(p["y"][:, 2], s32[:, 2]))


def test_accumulate_returns_a_mergeable_state(dask_cluster: Any) -> None:
    p = _problem(5, 300, 3, masked=True, weighted=False)
    d = _chunked(p, [100, 200])
    acc = td.accumulate(d["y"], d["s"], mask=d["m"])
    assert acc.n_samples == 300
    again = pickle.loads(pickle.dumps(acc))
    _same(
        again.compute()["ap_macro"], tm.multilabel_report(p["y"], p["s"], mask=p["m"])["ap_macro"]
    )
    runs = td.label_runs(d["y"], d["s"], mask=d["m"])
    assert runs[2] == LabelRuns.from_scores(p["y"][:, 2], p["s"][:, 2], mask=p["m"][:, 2])


def test_graph_holds_no_scores(dask_cluster: Any) -> None:
    """Tasks refer to the blocks of the user's graph: the graph the module adds
    holds no array larger than a few bytes."""
    p = _problem(1, 2000, 4, masked=True, weighted=True)
    d = _chunked(p, [500, 1000, 1500])
    graph = td.accumulator_graph(d["y"], d["s"], mask=d["m"], sample_weight=d["w"])
    base = set()
    for x in d.values():
        base |= set(x.__dask_graph__())
    added = {k: v for k, v in dict(graph.__dask_graph__()).items() if k not in base}
    assert added
    assert max(len(pickle.dumps(v)) for v in added.values()) < 4096


def test_errors(dask_cluster: Any) -> None:
    p = _problem(2, 50, 3, masked=False, weighted=False)
    with pytest.raises(TypeError, match=r"dask\.array or dask\.dataframe"):
        td.multilabel_report(p["y"], p["s"])
    y = da.from_array(p["y"], chunks=10)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        td.roc_auc_score(y, da.from_array(p["s"][:40], chunks=10))
    with pytest.raises(ValueError, match="average has to be one of"):
        td.average_precision_score(y, da.from_array(p["s"], chunks=10), average="binary")
    bad = p["y"].copy()
    bad[4, 1] = 2
    with pytest.raises(ValueError):
        td.multilabel_report(da.from_array(bad, chunks=10), da.from_array(p["s"], chunks=10))


def test_misaligned_runs_arrays_are_accepted() -> None:
    """Arrays unpickled from a network frame may be misaligned; the kernels need
    aligned ones (a merge of such runs failed before LabelRuns aligned them)."""
    r = LabelRuns.from_scores(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.3, 0.3]))
    raw = np.zeros(8 * len(r) + 1, dtype=np.uint8)
    raw[1:] = r.keys.view(np.uint8)
    keys = raw[1:].view(np.uint64)
    assert not keys.flags.aligned
    odd = LabelRuns(keys, r.pos, r.neg, n_pos=r.n_pos, n_neg=r.n_neg, score_kind=r.score_kind)
    assert odd.merge(r).figures() == r.merge(r).figures()


def test_killed_worker_is_retried(dask_cluster: Any) -> None:
    """A worker process killed while it computes blocks: Dask reruns its tasks on
    the worker that is left (and on the restarted one) and the report is unchanged."""
    from distributed import get_client

    client = get_client()
    p = _problem(11, 4000, 4, masked=True, weighted=True)
    expected = tm.multilabel_report(p["y"], p["s"], mask=p["m"], sample_weight=p["w"])
    d = _chunked(p, list(range(250, 4000, 250)))
    slow = d["s"].map_blocks(lambda b: (time.sleep(0.4), b)[1], dtype=d["s"].dtype)
    future = client.compute(
        td.accumulator_graph(d["y"], slow, mask=d["m"], sample_weight=d["w"]), retries=2
    )
    pids = client.run(os.getpid)
    deadline = time.monotonic() + 30
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [a for a, tasks in client.processing().items() if tasks]
        if busy:
            victim = pids[busy[0]]
        time.sleep(0.1)
    assert victim is not None, "no worker started a task"
    time.sleep(0.5)
    os.kill(victim, signal.SIGKILL)
    acc = future.result(timeout=120)
    report = acc.compute()
    for key in expected:
        _same(report[key], expected[key])
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


def test_import_error_names_the_extra() -> None:
    probe = (
        "import sys\nsys.modules['distributed'] = None\n"
        "try:\n    import toxeval.dask\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "pip install 'toxeval[dask]'" in out


def test_empty_blocks_and_degenerate_inputs(dask_cluster: Any) -> None:
    """Empty row blocks anywhere; all weights zero and all labels masked give the
    in-memory errors and warnings."""
    p = _problem(9, 120, 3, masked=True, weighted=True)
    d = _chunked(p, [0, 0, 40, 40, 120, 120])
    assert 0 in d["y"].chunks[0]
    _compare_all(p, d)
    zero = {**p, "w": np.zeros(120)}
    _compare_all(zero, _chunked(zero, [60]))
    unknown = {**p, "m": np.zeros((120, 3), dtype=bool), "w": None}
    dz = _chunked(unknown, [30, 90])
    for name in ROW_METRICS:
        v0, w0 = _call(getattr(tm, name), p["y"], p["s"], mask=unknown["m"])
        v1, w1 = _call(getattr(td, name), dz["y"], dz["s"], mask=dz["m"])
        assert (v1 == v0 or (v0 != v0 and v1 != v1)) and w1 == w0, name


def test_input_of_no_rows_gives_the_in_memory_result(dask_cluster: Any) -> None:
    """No rows at all: the report of NaN figures with the in-memory warnings (it was
    an error), and AP/ROC AUC raise what scikit-learn raises, by either path."""
    for k in (1, 3):
        y0, s0 = np.zeros((0, k), dtype=np.int64), np.zeros((0, k))
        y1, s1 = da.from_array(y0, chunks=(1, k)), da.from_array(s0, chunks=(1, k))
        for forced in ({}, {"n_ranges": 3}):
            r0, w0 = _call(tm.multilabel_report, y0, s0)
            r1, w1 = _call(td.multilabel_report, y1, s1, **forced)
            if isinstance(r0, tuple):  # one label: multilabel_report's own error
                assert r1 == r0
            else:
                assert w1 == w0 and set(r1) == set(r0)
                for key in r0:
                    _same(r1[key], r0[key])
            for name in ("average_precision_score", "roc_auc_score"):
                for avg in ("macro", "micro"):
                    v0, _ = _call(getattr(tm, name), y0, s0, average=avg)
                    v1, _ = _call(getattr(td, name), y1, s1, average=avg, **forced)
                    assert v1 == v0, (name, avg, forced)
    for name in ("average_precision_score", "roc_auc_score"):
        v0, _ = _call(getattr(tm, name), np.zeros(0, np.int64), np.zeros(0))
        v1, _ = _call(
            getattr(td, name), da.zeros(0, chunks=1, dtype=np.int64), da.zeros(0, chunks=1)
        )
        assert v1 == v0, name


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 400),
    cuts=st.lists(st.integers(0, 400), max_size=5),
    n_ranges=st.integers(1, 9),
    masked=st.booleans(),
    weighted=st.booleans(),
)
def test_range_partitions_equal_in_memory(
    dask_cluster: Any,
    seed: int,
    n: int,
    cuts: list[int],
    n_ranges: int,
    masked: bool,
    weighted: bool,
) -> None:
    """The report and AP/ROC AUC (per label and micro) merged range by range, ties at
    the splitters, degenerate labels, empty blocks and several passes over the data
    (a tiny memory target) included, equal the in-memory values, warnings included."""
    p = _problem(seed, n, 4, masked=masked, weighted=weighted)
    d = _chunked(p, cuts)
    forced = {"n_ranges": n_ranges, "memory_limit": "16KiB"}
    kw0 = {"mask": p["m"], "sample_weight": p["w"]}
    kw1 = {"mask": d["m"], "sample_weight": d["w"], **forced}
    r0, w0 = _call(tm.multilabel_report, p["y"], p["s"], **kw0)
    r1, w1 = _call(td.multilabel_report, d["y"], d["s"], **kw1)
    assert w1 == w0
    assert set(r1) == set(r0)
    for key in r0:
        _same(r1[key], r0[key])
    for name in ("average_precision_score", "roc_auc_score"):
        for avg in (None, "macro", "weighted", "micro"):
            v0, w0 = _call(getattr(tm, name), p["y"], p["s"], average=avg, **kw0)
            v1, w1 = _call(getattr(td, name), d["y"], d["s"], average=avg, **kw1)
            assert w1 == w0, (name, avg)
            if isinstance(v0, tuple):
                assert v1 == v0
            else:
                _same(v1, v0)


def _continuous(seed: int, n: int, k: int) -> dict[str, Any]:
    """Continuous scores (every score distinct: the ranges' case), with a few ties, a
    label without positives, masks and weights."""
    p = _problem(seed, n, k, masked=True, weighted=True)
    rng = np.random.default_rng(seed)
    s = rng.random((n, k))
    s[: n // 10] = 0.5  # ties across labels and blocks
    return {**p, "s": s}


def test_the_range_path_is_chosen_from_the_data(dask_cluster: Any, monkeypatch: Any) -> None:
    """Continuous scores over the memory target go through ranges (chosen by the
    survey, several passes); rounded scores stay on the tree merge; both equal."""
    import toxeval.dask.metrics as tdm

    used: list[int] = []
    real = tdm.ranged_report

    def spy(*args: Any) -> Any:
        used.append(len(args[2].passes))
        return real(*args)

    monkeypatch.setattr(tdm, "ranged_report", spy)
    p = _continuous(11, 3000, 3)
    d = _chunked(p, [0, 700, 700, 1900])
    kw0 = {"mask": p["m"], "sample_weight": p["w"]}
    kw1 = {"mask": d["m"], "sample_weight": d["w"], "memory_limit": "64KiB"}
    r0, w0 = _call(tm.multilabel_report, p["y"], p["s"], **kw0)
    r1, w1 = _call(td.multilabel_report, d["y"], d["s"], **kw1)
    assert used and used[0] > 1, used
    assert w1 == w0
    for key in r0:
        _same(r1[key], r0[key])
    used.clear()
    rounded = {**p, "s": np.round(p["s"], 2)}
    dr = _chunked(rounded, [1000])
    r2, _ = _call(td.multilabel_report, dr["y"], dr["s"], mask=dr["m"], memory_limit="64KiB")
    assert not used
    r3, _ = _call(tm.multilabel_report, rounded["y"], rounded["s"], mask=p["m"])
    _same(r2["ap_micro"], r3["ap_micro"])


def test_range_path_on_dataframes_and_float32(dask_cluster: Any) -> None:
    p = _continuous(12, 2000, 3)
    s32 = p["s"].astype(np.float32)
    frame = pd.DataFrame({**{f"y{j}": p["y"][:, j] for j in range(3)}})
    for j in range(3):
        frame[f"s{j}"] = s32[:, j]
        frame[f"m{j}"] = p["m"][:, j]
    df = dd.from_pandas(frame, npartitions=4)
    args = (df[["y0", "y1", "y2"]], df[["s0", "s1", "s2"]])
    r1 = td.multilabel_report(*args, mask=df[["m0", "m1", "m2"]], n_ranges=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r0 = tm.multilabel_report(p["y"], s32, mask=p["m"])
    for key in r0:
        _same(r1[key], r0[key])


def test_range_path_of_one_label_and_its_errors(dask_cluster: Any) -> None:
    """1-D binary input through ranges equals the in-memory value; bad input gives the
    tree path's errors (the same checks, before any range is built)."""
    p = _continuous(14, 600, 2)
    y, s = p["y"][:, 1], p["s"][:, 1]
    dy, ds = da.from_array(y, chunks=150), da.from_array(s, chunks=200)
    for name in ("average_precision_score", "roc_auc_score"):
        _same(getattr(td, name)(dy, ds, n_ranges=3), getattr(tm, name)(y, s))
    bad_y, bad_s = y.copy(), s.copy()
    bad_y[3], bad_s[5] = 2, np.nan
    for args in ((da.from_array(bad_y, chunks=150), ds), (dy, da.from_array(bad_s, chunks=200))):
        tree = _call(td.average_precision_score, *args)[0]
        ranged = _call(td.average_precision_score, *args, n_ranges=3)[0]
        assert isinstance(tree, tuple) and ranged == tree


def test_range_graphs_hold_no_scores(dask_cluster: Any, monkeypatch: Any) -> None:
    """Every task the range path adds (survey, cut, pick, reduce) pickles small: the
    splitters and the reducers' few numbers, never cells."""
    from toxeval.dask import tree

    p = _continuous(13, 4000, 3)
    d = _chunked(p, [1000, 2000, 3000])
    base = set()
    for x in d.values():
        if x is not None:
            base |= set(x.__dask_graph__())
    sizes: list[int] = []
    real = tree.compute_one

    def spy(graph: Any) -> Any:
        added = [v for k, v in dict(graph.__dask_graph__()).items() if k not in base]
        sizes.extend(len(pickle.dumps(v)) for v in added)
        return real(graph)

    import toxeval.dask.metrics as tdm
    import toxeval.dask.ranges as tdr

    monkeypatch.setattr(tdr, "compute_one", spy)
    monkeypatch.setattr(tdm, "compute_one", spy)
    td.multilabel_report(d["y"], d["s"], mask=d["m"], sample_weight=d["w"], n_ranges=6)
    assert sizes and max(sizes) < 4096


def test_replayed_warnings_are_scikit_learns_class_where_it_is_imported(
    dask_cluster: Any,
) -> None:
    """A warning a worker recorded is replayed as the in-memory call emits it: where
    scikit-learn is imported, toxeval's UndefinedMetricWarning is bridged to its class
    (a worker that never imported scikit-learn records the plain one)."""
    sk = pytest.importorskip("sklearn.exceptions")
    y = np.array([[1, 0], [0, 0], [1, 1], [0, 1]], dtype=np.int8)  # rows 1, 2: one class
    s = np.array([[0.9, 0.2], [0.1, 0.4], [0.5, 0.7], [0.3, 0.8]])
    dy, ds = da.from_array(y, chunks=(2, 2)), da.from_array(s, chunks=(2, 2))
    with pytest.warns(sk.UndefinedMetricWarning, match="Only one class"):
        tm.roc_auc_score(y, s, average="samples")
    with pytest.warns(sk.UndefinedMetricWarning, match="Only one class"):
        td.roc_auc_score(dy, ds, average="samples")
