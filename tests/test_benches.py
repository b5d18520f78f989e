"""The benchmark harnesses in benches/ work end to end (no timing is asserted).

`bench_metrics.py` is exercised with ``--candidate sklearn`` (the reference against
itself: every value check must say "equal") and with a fake ``toxeval.metrics`` that
returns a wrong value (must be reported as MISMATCH and never timed). The end-to-end
bench is exercised with a fake CLI through ``$TOXEVAL_BENCH_CLI``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
import toxeval._core

BENCHES = Path(__file__).resolve().parents[1] / "benches"
if not (BENCHES / "bench_metrics.py").is_file():  # tests run away from the repository
    pytest.skip("benches/ is not beside the tests", allow_module_level=True)
sys.path.insert(0, str(BENCHES))

import _workload as wl  # noqa: E402
import bench_end_to_end as e2e  # noqa: E402
import bench_metrics as bm  # noqa: E402

pytest.importorskip("sklearn")
pytest.importorskip("scipy")


# --------------------------------------------------------------------------- workload


@pytest.mark.parametrize("variant", wl.VARIANTS, ids=lambda v: v.name)
def test_arrays_follow_the_documented_workload(variant: wl.Variant) -> None:
    a = wl.make_arrays(70_000, variant, seed=1)  # more than one generation chunk
    assert a.y_true.shape == (70_000, wl.K_LABELS) and a.y_true.dtype == np.int64
    assert set(np.unique(a.y_true)) <= {0, 1}
    assert 0.09 < a.y_true.mean() < 0.11
    assert a.y_score.dtype == np.dtype(variant.dtype) and a.y_score.shape == a.y_true.shape
    assert a.x1.shape == a.x2.shape == (70_000,)
    if variant.ties:
        assert np.unique(a.y_score).size <= 101
    else:
        assert np.unique(a.y_score).size > 100_000


def test_float32_variant_is_the_float64_scores_cast() -> None:
    f64 = wl.make_arrays(1000, wl.Variant("float64", True), seed=3)
    f32 = wl.make_arrays(1000, wl.Variant("float32", True), seed=3)
    np.testing.assert_array_equal(f64.y_true, f32.y_true)
    np.testing.assert_array_equal(f64.y_score.astype(np.float32), f32.y_score)


def test_values_match_is_nan_equal_and_strict() -> None:
    assert wl.values_match(float("nan"), np.nan)
    assert wl.values_match(0.5, 0.5 * (1 + 1e-12))
    assert not wl.values_match(0.5, 0.5 * (1 + 1e-6))
    assert not wl.values_match(np.array([1.0, 2.0]), np.array([1.0]))
    assert not wl.values_match(float("nan"), 0.0)


def test_kendall_results_compare_statistic_and_pvalue() -> None:
    from scipy.stats import kendalltau

    a = wl.make_arrays(200, wl.Variant("float64", False))
    r = kendalltau(a.x1, a.x2)
    assert wl.as_values(r).tolist() == [float(r.statistic), float(r.pvalue)]
    assert wl.values_match(r, kendalltau(a.x1, a.x2))


def test_missing_toxeval_function_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("toxeval.metrics")
    monkeypatch.setitem(sys.modules, "toxeval.metrics", fake)
    r = wl.resolve_candidate(wl.CASES_BY_KEY["lrap"], "toxeval")
    assert r.fn is None and "label_ranking_average_precision_score" in r.reason


def test_n_jobs_is_passed_through(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def label_ranking_loss(y_true: Any, y_score: Any, **kw: Any) -> float:
        seen.update(kw)
        return 0.0

    fake = types.ModuleType("toxeval.metrics")
    fake.label_ranking_loss = label_ranking_loss  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toxeval.metrics", fake)
    r = wl.resolve_candidate(wl.CASES_BY_KEY["lrl"], "toxeval", n_jobs=2)
    assert r.fn is not None
    r.fn(None, None)
    assert seen == {"n_jobs": 2}


def test_sklearn_candidate_resolves_to_the_reference() -> None:
    from sklearn.metrics import coverage_error

    assert wl.resolve_candidate(wl.CASES_BY_KEY["coverage"], "sklearn").fn is coverage_error
    assert wl.resolve_candidate(wl.CASES_BY_KEY["report"], "sklearn").fn is None


# --------------------------------------------------------------------------- bench_metrics


def test_parse_sizes() -> None:
    assert bm.parse_sizes("10k,100k,1M") == [10_000, 100_000, 1_000_000]
    assert bm.parse_sizes("1m, 2_000,500") == [500, 2000, 1_000_000]


def test_njobs_pairs_fill_the_time_budget_within_bounds() -> None:
    # A 0.33 s pair (AP macro at 1M) gets 13 pairs, a 1 s pair the floor of 9, a
    # 65 ms pair (label_ranking_loss) the cap; counts stay odd.
    assert bm.njobs_pairs(0.33) == 13
    assert bm.njobs_pairs(1.0) == bm.NJOBS_PAIRS_MIN
    assert bm.njobs_pairs(0.2) == 21  # ceil(4 / 0.2) = 20, made odd
    assert bm.njobs_pairs(0.065) == bm.NJOBS_PAIRS_MAX  # 62 wanted, capped
    assert bm.njobs_pairs(1e-6) == bm.NJOBS_PAIRS_MAX
    assert bm.njobs_pairs(0.0) == bm.NJOBS_PAIRS_MAX
    for s in (0.01, 0.05, 0.1, 0.2, 0.3, 0.45, 2.0):
        n = bm.njobs_pairs(s)
        assert n % 2 == 1 and bm.NJOBS_PAIRS_MIN <= n <= bm.NJOBS_PAIRS_MAX


def test_paired_times_takes_the_pairs_it_is_given() -> None:
    calls: list[str] = []
    pairs = bm.paired_times(lambda: calls.append("a"), lambda: calls.append("b"), (), {}, pairs=3)
    assert len(pairs) == 3 and calls == ["a", "b"] * 4  # one warm-up pair, then 3


def test_paired_times_sizes_itself_from_the_warm_up_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each call "takes" 0.1 s: the warm-up pair is 0.2 s, so 4 s / 0.2 s = 20 -> 21 pairs.
    monkeypatch.setattr(bm, "timed_call", lambda fn, args, kwargs, cap=None: (0.1, fn()))
    assert len(bm.paired_times(lambda: None, lambda: None, (), {})) == 21


def _run(tmp_path: Path, *args: str) -> dict[str, Any]:
    assert bm.main([*args, "--out", str(tmp_path), "--no-torchmetrics", "--repeats", "1"]) == 0
    doc: dict[str, Any] = json.loads((tmp_path / "bench_metrics.json").read_text())
    assert (tmp_path / "bench_metrics.md").read_text().startswith("# toxeval.metrics benchmark")
    return doc


@pytest.mark.slow
def test_harness_end_to_end_with_sklearn_as_candidate(tmp_path: Path) -> None:
    doc = _run(
        tmp_path,
        "--candidate",
        "sklearn",
        "--sizes",
        "300",
        "--variants",
        "float64,float32-ties",
        "--only",
        "ap_micro,auc_samples,lrl,ndcg,kendalltau,report",
    )
    assert doc["machine"]["versions"]["scikit-learn"] != "not installed"
    # The imported toxeval is named even when it runs from a build in place.
    assert doc["machine"]["versions"]["toxeval"].startswith(toxeval.__version__)
    # The source measured is the one checked out when the run started.
    assert doc["machine"]["git_commit"] == bm.source_state()["git_commit"]
    assert isinstance(doc["machine"]["git_dirty"], bool)
    rows = {(r["case"], r["variant"]): r for r in doc["results"]}
    assert len(rows) == 12
    for (case, _), r in rows.items():
        if case == "report":
            assert r["candidate"]["status"] == "not available"
            continue
        assert r["check"] == "equal", r
        assert r["candidate"]["status"] == "measured" and r["candidate"]["median_s"] > 0
        assert r["reference"]["status"] == "measured"
        assert r["ratio_reference"] is not None
    # roc_auc samples on rows without positives is NaN for both, and NaN == NaN here
    assert np.isnan(rows[("auc_samples", "float64")]["values"]["candidate"][0])
    assert {r["status"] for r in doc["small_input"]} == {"measured"}
    assert {r["status"] for r in doc["n_jobs"]} == {"n/a"}
    probes = [r for r in doc["memory"] if r["status"] == "ok"]
    assert {r["variant"] for r in probes} == {"float64", "float32"}
    assert all(r["growth_over_y_score"] >= 0 for r in probes)
    results = {t["result"] for t in doc["targets"] if "at 1M" in t["target"]}
    assert results == {"n/a"}  # 1M not run


@pytest.mark.slow
def test_wrong_answer_is_reported_and_never_timed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = types.ModuleType("toxeval.metrics")
    fake.coverage_error = lambda y_true, y_score, **kw: 0.123  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toxeval.metrics", fake)
    doc = _run(tmp_path, "--sizes", "200", "--variants", "float64", "--only", "coverage,lrl")
    cov, lrl = (next(r for r in doc["results"] if r["case"] == k) for k in ("coverage", "lrl"))
    assert cov["check"] == "MISMATCH"
    assert cov["candidate"]["status"] == "MISMATCH" and cov["candidate"]["median_s"] is None
    assert cov["ratio_reference"] is None
    assert lrl["candidate"]["status"] == "not available"
    small = {r["case"]: r["status"] for r in doc["small_input"]}
    assert small == {"coverage": "MISMATCH", "lrl": "not available"}


@pytest.mark.slow
def test_documented_tie_deviation_is_labelled_not_a_mismatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sklearn.metrics as skm

    def shifted(y_true: Any, y_score: Any, **kw: Any) -> float:
        kw.pop("n_jobs", None)
        return float(skm.ndcg_score(y_true, y_score, **kw)) * (1 + 1e-6)

    fake = types.ModuleType("toxeval.metrics")
    fake.ndcg_score = shifted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toxeval.metrics", fake)
    doc = _run(
        tmp_path,
        "--sizes",
        "200",
        "--variants",
        "float64,float64-ties",
        "--only",
        "ndcg_ignore_ties",
    )
    rows = {r["variant"]: r for r in doc["results"]}
    # Without ties a difference is a wrong answer; on ties it is the documented one.
    assert rows["float64"]["check"] == "MISMATCH"
    assert rows["float64"]["candidate"]["status"] == "MISMATCH"
    assert rows["float64-ties"]["check"].startswith("documented deviation: order inside ties")
    assert rows["float64-ties"]["candidate"]["status"] == "measured"


def _bench(cap: float) -> bm.Bench:
    return bm.Bench(
        bm.Config(
            sizes=[1000],
            variants=[wl.VARIANTS[0]],
            cases=[wl.CASES_BY_KEY["lrl"]],
            candidate="sklearn",
            cap=cap,
            max_repeats=1,
            out=Path("unused"),
            seed=1,
            torchmetrics=False,
            memory=False,
            small=False,
            njobs=False,
        )
    )


def test_slow_reference_is_skipped_and_extrapolated_linearly() -> None:
    bench = _bench(cap=5.0)
    case, variant = wl.CASES_BY_KEY["lrl"], wl.VARIANTS[0]
    bench._last[(case.key, variant.name, "reference")] = (100, 1.0)
    called = []
    timing, value = bench._reference_first(
        "reference", lambda *a, **k: called.append(1), case, variant, 1000, ()
    )
    assert called == [] and value is None
    assert timing.status == "extrapolated" and timing.median_s == pytest.approx(10.0)
    assert "N=100" in timing.note


def test_reference_over_the_cap_is_stopped() -> None:
    import time

    bench = _bench(cap=0.05)
    case, variant = wl.CASES_BY_KEY["lrl"], wl.VARIANTS[0]

    def slow(*a: Any, **k: Any) -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # pure Python, so SIGALRM can interrupt it
            pass

    timing, value = bench._reference_first("reference", slow, case, variant, 1000, ())
    assert timing.status == "over cap" and value is None


def test_reference_over_the_cap_gives_a_lower_bound_target() -> None:
    bench = _bench(cap=30.0)
    row = {
        "case": "lrl",
        "variant": "float64",
        "n": bm.TARGET_N,
        "candidate": {"status": "measured", "median_s": 0.048},
        "reference": {"status": "over cap", "median_s": None},
        "ratio_reference": None,
        "check": "equal at smaller N (reference skipped here)",
    }
    bench.cfg.sizes = [bm.TARGET_N]
    bench.rows.append(row)
    lrl = next(t for t in bench.targets() if t["target"].startswith("label_ranking_loss "))
    assert lrl["measured"] == pytest.approx(30.0 / 0.048)
    assert lrl["result"] == "PASS" and "lower bound" in lrl["note"]
    # A bound below the target proves nothing either way.
    row["candidate"]["median_s"] = 1.0
    lrl = next(t for t in bench.targets() if t["target"].startswith("label_ranking_loss "))
    assert lrl["measured"] == pytest.approx(30.0) and lrl["result"] == "n/a"
    # A measured reference is not a bound.
    assert (
        bm.over_cap_bound({**row, "reference": {"status": "measured", "median_s": 9.0}}, 30.0)
        is None
    )


def test_memprobe_reports_growth_relative_to_y_score() -> None:
    probe = [str(BENCHES / "_memprobe.py"), "coverage", "20000", "float32"]
    proc = subprocess.run(
        [sys.executable, *probe, "--candidate", "sklearn"],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(proc.stdout)
    assert r["status"] == "ok", r
    assert r["y_score_nbytes"] == 20000 * 15 * 4
    assert r["growth_over_y_score"] == r["growth_bytes"] / r["y_score_nbytes"]
    assert r["peak_bytes"] >= r["baseline_bytes"]


# --------------------------------------------------------------------------- end to end


def test_generated_dump_has_the_documented_schema(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    paths = e2e.generate(500, tmp_path, seed=7)
    preds = [json.loads(line) for line in paths["predictions.jsonl"].read_text().splitlines()]
    data = [json.loads(line) for line in paths["dataset.jsonl"].read_text().splitlines()]
    assert len(preds) == len(data) == 500
    assert all(set(p) == {"id", "scores"} for p in preds)
    assert all(list(p["scores"]) == list(e2e.CATEGORIES) for p in preds)
    assert all(set(d) == {"id", "text", "labels"} for d in data)
    assert all(set(d["labels"]) <= set(e2e.CATEGORIES) for d in data)
    assert {p["id"] for p in preds} == {d["id"] for d in data}
    assert [p["id"] for p in preds] != [d["id"] for d in data]  # shuffled

    pt, dt = pq.read_table(paths["predictions.parquet"]), pq.read_table(paths["dataset.parquet"])
    assert [f.name for f in pt.schema.field("scores").type] == list(e2e.CATEGORIES)
    assert pt.to_pylist() == preds
    assert dt.to_pylist() == data
    # labels are informative: positives score higher on average
    by_id = {d["id"]: set(d["labels"]) for d in data}
    pos = [s for p in preds for c, s in p["scores"].items() if c in by_id[p["id"]]]
    neg = [s for p in preds for c, s in p["scores"].items() if c not in by_id[p["id"]]]
    assert np.mean(pos) > np.mean(neg)


def test_generation_is_reused_when_the_manifest_matches(tmp_path: Path) -> None:
    paths = e2e.generate(50, tmp_path, seed=1)
    stamp = paths["predictions.parquet"].stat().st_mtime_ns
    e2e.generate(50, tmp_path, seed=1)
    assert paths["predictions.parquet"].stat().st_mtime_ns == stamp
    e2e.generate(60, tmp_path, seed=1)
    assert len(paths["dataset.jsonl"].read_text().splitlines()) == 60


def test_missing_cli_skips_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOXEVAL_BENCH_CLI", f"{sys.executable} -c 'import sys; sys.exit(3)'")
    assert e2e.main(["--rows", "100", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("SKIP: `toxeval score` is not available")
    assert not (tmp_path / "e2e-data").exists()


FAKE_CLI = """
import argparse, json, pathlib, sys
p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="cmd", required=True)
s = sub.add_parser("score")
s.add_argument("predictions"); s.add_argument("--dataset", required=True); s.add_argument("--out", required=True)
s.add_argument("--bootstrap", type=int, required=True)
a = p.parse_args()
n = sum(1 for _ in open(a.predictions, "rb")) if a.predictions.endswith(".jsonl") else -1
out = pathlib.Path(a.out); out.mkdir(parents=True, exist_ok=True)
(out / "summary.json").write_text(json.dumps({"rows": n, "dataset": a.dataset, "bootstrap": a.bootstrap}))
import os
if os.environ.get("TOXEVAL_TIMINGS"):
    print("a warning line", file=sys.stderr)
    steps = {"importing": 0.01, "reading dataset": 0.02, "reading predictions": 0.03,
             "computing metrics": 0.04, "summarising": 0.005, "writing outputs": 0.001}
    print("toxeval: timings: " + json.dumps(steps), file=sys.stderr)
    print("toxeval: cpu timings: " + json.dumps({k: v / 2 for k, v in steps.items()}), file=sys.stderr)
"""


def test_fake_cli_is_timed_with_its_peak_rss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "fake_cli.py"
    script.write_text(FAKE_CLI)
    monkeypatch.setenv("TOXEVAL_BENCH_CLI", f"{sys.executable} {script}")
    out = tmp_path / "out"
    assert e2e.main(["--rows", "200", "--repeats", "2", "--out", str(out)]) == 0
    doc = json.loads((out / "bench_end_to_end.json").read_text())
    assert [r["format"] for r in doc["results"]] == ["jsonl", "parquet"]
    for r in doc["results"]:
        assert r["failed_runs"] == 0 and len(r["runs"]) == 2
        assert all(run["peak_rss_bytes"] > 1_000_000 for run in r["runs"])
        assert r["memory_result"] == "PASS"
        assert r["dataset"].endswith(r["format"])
    summary = json.loads((out / "e2e-run-jsonl" / "summary.json").read_text())
    assert summary["rows"] == 200
    assert summary["bootstrap"] == 0  # the targets time scoring without intervals
    md = (out / "bench_end_to_end.md").read_text()
    assert "toxeval score end to end" in md
    # the CLI's step times, grouped; the timings line is not taken for an error message
    assert "Where the time goes" in md and "reading + joining" in md
    for r in doc["results"]:
        run = r["runs"][0]
        assert run["steps_s"]["computing metrics"] == 0.04
        assert run["stderr_tail"] == ["a warning line"]
        ph = run["phases_s"]
        assert ph["reading + joining"] == pytest.approx(0.05)
        assert ph["metrics"] == pytest.approx(0.04)
        assert ph["other steps"] == pytest.approx(0.016)
        assert ph["start-up + exit"] == pytest.approx(max(0.0, run["wall_s"] - 0.106))
        assert r["median_phases_s"] in [x["phases_s"] for x in r["runs"]]
        assert run["steps_cpu_s"]["computing metrics"] == 0.02
        assert run["phases_cpu_s"]["metrics"] == pytest.approx(0.02)
    assert "| jsonl | CPU |" in md
    # the reference: multilabel_report on the same arrays, timed in the same bench run
    ref = doc["reference"]
    assert len(ref["wall_s"]) == 2 and ref["median_wall_s"] > 0
    for r in doc["results"]:
        assert r["ratio"] == pytest.approx(r["median_wall_s"] / ref["median_wall_s"])
        assert r["max_ratio"] == e2e.MAX_RATIO[r["format"]]
        assert r["ratio_result"] == ("PASS" if r["ratio"] <= r["max_ratio"] else "FAIL")
    assert "Reference: `toxeval.metrics.multilabel_report` on the same arrays" in md


def test_failing_cli_run_is_a_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "fake_cli.py"
    script.write_text(
        "import sys\nif '--help' in sys.argv: sys.exit(0)\nprint('boom', file=sys.stderr)\nsys.exit(1)\n"
    )
    monkeypatch.setenv("TOXEVAL_BENCH_CLI", f"{sys.executable} {script}")
    out = tmp_path / "out"
    assert (
        e2e.main(["--rows", "50", "--repeats", "1", "--formats", "parquet", "--out", str(out)]) == 0
    )
    (r,) = json.loads((out / "bench_end_to_end.json").read_text())["results"]
    assert r["failed_runs"] == 1 and r["wall_result"] == "FAIL"
    assert r["last_stderr"] == ["boom"]


# --------------------------------------------------------------------------- bench_sort_floor


def test_sort_floor_harness(capsys: pytest.CaptureFixture[str]) -> None:
    import bench_sort_floor as floor

    r = floor.measure(rows=2_000, labels=3, repeats=1)
    assert set(r) == {
        "sum_ms",
        "sort_one_column_ms",
        "sort_columns_2threads_ms",
        "sort_cells_2threads_ms",
    }
    assert all(v > 0 for v in r.values())
    assert floor.main(["--rows", "1000", "--labels", "2", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "x sum" in out and "1,000 x 2 float64" in out


@pytest.mark.skipif(not hasattr(bm.signal, "SIGALRM"), reason="the cap needs SIGALRM")
def test_a_repeat_past_the_cap_keeps_the_samples_taken() -> None:
    # The first call ran under the cap; a later repeat that does not is stopped and the
    # samples taken stand (the run goes on; CapExceeded does not escape).
    calls: list[int] = []

    def slow_repeat() -> None:  # the first call is the 0.01 s sample passed in
        calls.append(1)
        time.sleep(2.0)

    samples = bm.sample_more(slow_repeat, (), {}, [0.01], max_repeats=5, cap=0.2)
    assert samples == [0.01]
    assert len(calls) == 1  # stopped at the cap, not repeated


def test_memory_probe_measures_a_float32_call_on_its_own_arrays() -> None:
    # The probe takes the run's seed and hands back what building the arrays freed, so a
    # float32 copy of y_score inside the call shows as ~1x of y_score (2x as float64).
    out = subprocess.run(
        [
            sys.executable,
            str(Path(bm.__file__).parent / "_memprobe.py"),
            "ap_macro",
            "20000",
            "float32",
            "--candidate",
            "sklearn",
            "--seed",
            "7",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["status"] == "ok", result
    if sys.platform.startswith("linux"):  # glibc: trimmed, and the peak was reset
        assert result["trimmed"] is True and result["peak_reset"] is True
    assert result["growth_bytes"] > 0


# --------------------------------------------------------------------------- bench_bootstrap


def test_bench_bootstrap_runs_end_to_end() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(BENCHES / "bench_bootstrap.py"),
            "--rows",
            "400",
            "--labels",
            "3",
            "--resamples",
            "4",
            "--slow-resamples",
            "1",
            "--repeats",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "| bootstrap mAP + LRL |" in out.stdout
    assert "numpy+sklearn mAP + LRL (extrapolated from 1)" in out.stdout
    assert "peak extra memory of one AP bootstrap" in out.stdout
    assert "| with intervals (bootstrap=4) |" in out.stdout
    assert "report with intervals / without:" in out.stdout


# --------------------------------------------------------------------------- bench_native_ab


def _native_ab(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(BENCHES / "bench_native_ab.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_native_ab_times_every_case_on_both_builds() -> None:
    core = toxeval._core.__file__
    out = _native_ab(core, core, "--n", "500", "--rounds", "2", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    assert "round 2/2 done (B A)" in out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "/float" in line]
    keys = {line.split(" | ")[0][2:] for line in rows}
    assert keys == {f"{c.key}/{v}" for c in wl.CASES for v in ("float64", "float32")}
    for line in rows:
        a_ms, b_ms, ratio = (float(x) for x in line.strip("| ").split(" | ")[1:])
        assert a_ms >= 0 and b_ms >= 0 and ratio > 0
    assert "geometric mean of the median ratios B / A:" in out.stdout


def test_native_ab_refuses_a_missing_build(tmp_path: Path) -> None:
    out = _native_ab(toxeval._core.__file__, str(tmp_path / "nope.so"))
    assert out.returncode == 2
    assert "is not a file" in out.stderr


# --------------------------------------------------------------------------- bench_onnx


def test_bench_onnx_runs_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("tokenizers")
    cmd = [
        sys.executable,
        str(BENCHES / "bench_onnx.py"),
        *("--rows", "40", "--layers", "1", "--hidden", "64", "--repeats", "1", "--vocab", "500"),
        *("--out", str(tmp_path)),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    doc = json.loads((tmp_path / "bench_onnx.json").read_text())
    assert doc["rows"] == 40
    # the batched paths score what the one-row loop scores
    assert doc["max_abs_diff_classifier"] < 1e-5 and doc["max_abs_diff_predict"] < 1e-5


# --------------------------------------------------------------------------- out of core


def test_out_of_core_bench_runs_end_to_end(tmp_path: Path) -> None:
    """bench_out_of_core.py on a tiny N: shards generated, the floor and the scoring
    timed in their own processes, the table written (no timing asserted)."""
    import bench_out_of_core as ooc

    assert ooc.main(["--sizes", "3000", "--rows-per-shard", "1000", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "bench_out_of_core.json").read_text())
    assert [r["n"] for r in rows] == [3000]
    assert rows[0]["path"] in ("tree merge", "range partitions")
    assert rows[0]["scoring"]["peak_rss_bytes"] > 0 and rows[0]["floor"]["wall_s"] > 0
    assert "| 3000 |" in (tmp_path / "bench_out_of_core.md").read_text()
    assert len(list((tmp_path / "ooc-data" / "3000").glob("*.parquet"))) == 3


# --------------------------------------------------------------------------- bench_streaming


def test_bench_streaming_checks_values_and_reports_state_sizes(tmp_path: Path) -> None:
    import bench_streaming as bs

    args = ["--updates", "4", "--rows", "50", "--labels", "3", "--repeats", "1"]
    results = bs.main([*args, "--out", str(tmp_path)])
    assert [r["check"] for r in results] == ["equal", "equal"]
    assert all(r["all_scores_bytes_analytic"] == 200 * 3 * 12 for r in results)
    assert all(r["nbytes_after_compute"] > 0 and r["saved_npz_bytes"] > 0 for r in results)
    md = (tmp_path / "bench_streaming.md").read_text()
    assert md.startswith("# MultilabelAccumulator: 4 updates of 50 x 3")
    assert "| continuous | equal |" in md and "| ties | equal |" in md
