"""Out-of-core scoring (toxeval.outofcore, toxeval.shards): a Parquet file or a directory
of shards scored with a deliberately small memory limit gives the in-memory figures of
the same data (counts exactly, floats to 1e-12 relative), on both metric paths (tree
merge, range partitions) and both inputs (one table; dataset and predictions joined by
id); bad shards are clear errors."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from toxeval.outofcore import parse_memory_limit, score_out_of_core
from toxeval.outofcore import run as ooc_run
from toxeval.outofcore.ranges import RangeSpill, reduce_runs
from toxeval.outofcore.spill_folder import spill_folder
from toxeval.scoring import score
from toxeval.shards import ShardError, discover_shards
from toxeval.streaming import RunsReducer
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")
K = TAX.k
TREE, RANGES = "tree merge", "range partitions"


def _data(n: int, seed: int = 0, *, levels: int = 20) -> dict[str, Any]:
    """Labels with unknown cells (some rows entirely unknown, one category without a
    positive), and float32 scores with heavy ties (``levels`` distinct values)."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, K)) < 0.25).astype(np.int8)
    y[:, 3] = 0  # a category with no positive: left out of mAP
    known = rng.random((n, K)) < 0.85
    known[::17] = False  # rows with no known label
    s = (np.floor(rng.random((n, K)) * levels) / levels).astype(np.float32)
    s[::5, 0] = -0.0  # -0.0 ties 0.0
    s[1::5, 0] = 0.0
    ids = np.array([f"item-{i:05d}" for i in range(n)])
    return {"ids": ids, "y": y, "known": known, "s": s}


def _labels(d: dict[str, Any], rows: Any) -> pa.Array:
    vals = [
        [int(v) if k else None for v, k in zip(yr, kr, strict=True)]
        for yr, kr in zip(d["y"][rows], d["known"][rows], strict=True)
    ]
    return pa.array(vals, pa.list_(pa.int8()))


def _write_dataset(path: Path, d: dict[str, Any], rows: Any = slice(None)) -> Path:
    ids = d["ids"][rows]
    t = pa.table({"id": ids, "text": [f"text {i}" for i in ids], "labels": _labels(d, rows)})
    pq.write_table(t, path, row_group_size=97)
    return path


def _score_table(d: dict[str, Any], rows: Any) -> dict[str, Any]:
    return {"id": d["ids"][rows], **{c: d["s"][rows, j] for j, c in enumerate(TAX.ids)}}


def _write_predictions(path: Path, d: dict[str, Any], rows: Any = slice(None)) -> Path:
    pq.write_table(pa.table(_score_table(d, rows)), path, row_group_size=61)
    return path


def _shards(folder: Path, d: dict[str, Any], parts: list[np.ndarray], *, labels: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(parts):
        cols = _score_table(d, rows)
        if labels:
            cols["labels"] = _labels(d, rows)
        pq.write_table(pa.table(cols), folder / f"part-{i:03d}.parquet", row_group_size=53)
    return folder


def _same(got: Any, want: Any) -> None:
    """The in-memory result's counts, figures and per-category rows, exactly for counts
    and to 1e-12 relative for floats (NaN where NaN)."""
    for key in ("scored", "excluded", "missing_prediction", "null_prediction", "failed_request"):
        assert got.counts[key] == want.counts[key], key
    for key in ("duplicate_rows_dropped", "unknown_ids_dropped", "known_cells", "unknown_cells"):
        assert got.counts[key] == want.counts[key], key
    assert got.counts["rows_without_known_labels"] == want.counts["rows_without_known_labels"]
    for key, v in want.figures.items():
        if key == "intervals":
            continue
        _close(got.figures[key], v, key)
    assert len(got.per_category) == len(want.per_category)
    for g, w in zip(got.per_category, want.per_category, strict=True):
        for key in ("id", "support", "negatives", "unknown", "in_map"):
            assert g[key] == w[key], (w["id"], key)
        for key in ("ap", "roc_auc", "f1"):
            _close(g[key], w[key], f"{w['id']} {key}")
    assert got.excluded_categories == want.excluded_categories
    assert got.binary_scores == want.binary_scores


def _close(a: float, b: float, what: str) -> None:
    if isinstance(b, float) and math.isnan(b):
        assert math.isnan(a), what
    else:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), what


@pytest.fixture
def data() -> dict[str, Any]:
    return _data(700)


@pytest.fixture
def in_memory(tmp_path: Path, data: dict[str, Any]) -> Any:
    ds = _write_dataset(tmp_path / "dataset.parquet", data)
    pred = _write_predictions(tmp_path / "predictions.parquet", data)
    return score(pred, ds, bootstrap=0)


@pytest.mark.parametrize("path", [TREE, RANGES])
@pytest.mark.parametrize("limit", ["16KiB", "256MB"])
def test_one_table_of_shards_equals_in_memory(
    tmp_path: Path, data: dict[str, Any], in_memory: Any, path: str, limit: str
) -> None:
    parts = np.array_split(np.arange(700), 4)
    folder = _shards(tmp_path / "one", data, parts, labels=True)
    got = score_out_of_core(folder, memory_limit=limit, states_path=path)
    _same(got, in_memory)
    info = got.config["out_of_core"]
    assert info["join"].startswith("none")
    if path == TREE and limit == "16KiB":
        # the tree's state outgrew its 8 KiB: the pass started again on ranges
        assert info["attempts"] == [TREE, RANGES] and info["path"] == RANGES
        assert any("outgrew" in n for n in got.notes)
    else:
        assert info["attempts"] == [path] and info["path"] == path
    if info["path"] == RANGES and limit == "16KiB":
        assert info["ranges_per_label"] > 1


@pytest.mark.parametrize("path", [TREE, RANGES])
def test_joined_shards_in_another_order_equal_in_memory(
    tmp_path: Path, data: dict[str, Any], in_memory: Any, path: str
) -> None:
    rng = np.random.default_rng(1)
    perm = rng.permutation(700)
    ds = _shards(tmp_path / "ds", data, np.array_split(np.arange(700), 3), labels=True)
    pred = _shards(tmp_path / "pred", data, np.array_split(perm, 5), labels=False)
    got = score_out_of_core(pred, ds, memory_limit="32KiB", states_path=path)
    _same(got, in_memory)
    assert got.config["out_of_core"]["join_partitions"] > 1


def test_automatic_path_and_what_results_json_says(tmp_path: Path, data: dict[str, Any]) -> None:
    folder = _shards(tmp_path / "one", data, [np.arange(700)], labels=True)
    got = score(folder, None, bootstrap=0)
    info = got.config["out_of_core"]
    assert info["path"] == TREE  # 700 x 15 fits any limit
    assert info["reason"] == "the predictions are a directory of shards"
    assert got.figures["intervals"] is None
    assert any("scored_rows.parquet" in n for n in got.notes)


def test_repeated_ids_across_shards_follow_on_mismatch(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    ds = _write_dataset(tmp_path / "dataset.parquet", data)
    rows = np.concatenate([np.arange(700), np.arange(100, 160), np.arange(650, 700)])
    rows = np.delete(rows, np.arange(20, 40))  # ids missing too
    flat = _write_predictions(tmp_path / "flat.parquet", data, rows)
    extra = _data(730, seed=3)
    shards = _shards(tmp_path / "pred", data, np.array_split(rows, 4), labels=False)
    pq.write_table(pa.table(_score_table(extra, np.arange(700, 730))), shards / "zz.parquet")
    pq.write_table(pa.table(_score_table(extra, np.arange(700, 730))), tmp_path / "unk.parquet")
    flat_all = pa.concat_tables([pq.read_table(flat), pq.read_table(tmp_path / "unk.parquet")])
    pq.write_table(flat_all, flat)
    want = score(flat, ds, on_mismatch="drop", bootstrap=0)
    got = score_out_of_core(shards, ds, on_mismatch="drop", memory_limit="32KiB")
    _same(got, want)
    assert got.counts["duplicate_rows_dropped"] == 110
    assert got.counts["unknown_ids_dropped"] == 30
    assert got.counts["missing_prediction"] == 20
    with pytest.raises(ValueError, match="do not match the dataset"):
        score_out_of_core(shards, ds, memory_limit="32KiB")


def test_null_and_failed_predictions_are_counted_not_scored(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    ds = _write_dataset(tmp_path / "dataset.parquet", data)
    cols = _score_table(data, slice(None))
    scores = pa.StructArray.from_arrays([pa.array(cols[c]) for c in TAX.ids], names=list(TAX.ids))
    null = np.zeros(700, bool)
    null[::11] = True
    scores = pa.StructArray.from_arrays(
        [pa.array(cols[c]) for c in TAX.ids], names=list(TAX.ids), mask=pa.array(null)
    )
    errors = [("timeout" if i % 13 == 0 else None) for i in range(700)]
    t = pa.table({"id": cols["id"], "scores": scores, "error": errors})
    pq.write_table(t, tmp_path / "pred.parquet", row_group_size=100)
    want = score(tmp_path / "pred.parquet", ds, bootstrap=0)
    got = score_out_of_core(tmp_path / "pred.parquet", ds, memory_limit="48KiB")
    _same(got, want)
    assert got.counts["null_prediction"] > 0 and got.counts["failed_request"] > 0


def test_empty_shards_are_read_as_no_rows(
    tmp_path: Path, data: dict[str, Any], in_memory: Any
) -> None:
    parts = [np.arange(0), *np.array_split(np.arange(700), 2), np.arange(0)]
    folder = _shards(tmp_path / "one", data, parts, labels=True)
    _same(score_out_of_core(folder, memory_limit="64KiB"), in_memory)


def test_shards_with_other_columns_or_types_name_the_shard(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    folder = _shards(tmp_path / "one", data, np.array_split(np.arange(700), 3), labels=True)
    t = pq.read_table(folder / "part-001.parquet")
    pq.write_table(
        t.set_column(1, "hate", t.column("hate").cast(pa.float64())), folder / "part-001.parquet"
    )
    with pytest.raises(ShardError, match=r"part-001.parquet: column 'hate' is double, but float"):
        discover_shards(folder)
    pq.write_table(t.drop_columns(["violence"]), folder / "part-001.parquet")
    with pytest.raises(ShardError, match=r"part-001.parquet: no column 'violence'"):
        discover_shards(folder)
    (folder / "part-001.parquet").write_bytes(b"not parquet")
    with pytest.raises(ShardError, match=r"part-001.parquet: not a readable Parquet file"):
        discover_shards(folder)


@pytest.mark.parametrize("name", ["p.jsonl", "p.csv.gz", "p.tsv"])
def test_a_jsonl_or_csv_file_is_refused_naming_its_format(tmp_path: Path, name: str) -> None:
    # not "Parquet magic bytes not found": the user gave a text table, and is told so
    path = tmp_path / name
    path.write_bytes(b"id,hate\na,0.5\n")
    fmt = "JSONL" if ".jsonl" in name else "CSV"
    with pytest.raises(
        ShardError, match=rf"^{path}: out-of-core scoring streams Parquet .*not {fmt};"
    ):
        discover_shards(path)


@pytest.mark.parametrize("change", ["delete", "rewrite"])
def test_a_shard_that_changes_while_read_is_an_error(
    tmp_path: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    folder = _shards(tmp_path / "one", data, np.array_split(np.arange(700), 3), labels=True)
    victim = folder / "part-002.parquet"

    def hook(shard: Any) -> None:
        if shard.path.name == "part-001.parquet":  # while the run is under way
            if change == "delete":
                victim.unlink()
            else:
                pq.write_table(pq.read_table(victim).slice(0, 10), victim)

    monkeypatch.setattr(ooc_run, "shard_hook", hook)
    word = "disappeared" if change == "delete" else "changed"
    with pytest.raises(ShardError, match=rf"part-002.parquet: the shard {word}"):
        score_out_of_core(folder, memory_limit="64KiB", states_path=RANGES)


def test_an_id_in_two_shards_of_one_table_is_an_error(tmp_path: Path, data: dict[str, Any]) -> None:
    parts = [np.arange(0, 400), np.arange(399, 700)]
    folder = _shards(tmp_path / "one", data, parts, labels=True)
    with pytest.raises(
        ValueError, match=r"row 401: duplicate id 'item-00399' \(first seen at row 400\)"
    ):
        score_out_of_core(folder, memory_limit="16KiB", states_path=RANGES)


def test_a_dataset_id_given_twice_is_an_error(tmp_path: Path, data: dict[str, Any]) -> None:
    ds = _shards(tmp_path / "ds", data, [np.arange(0, 400), np.arange(390, 700)], labels=True)
    pred = _write_predictions(tmp_path / "p.parquet", data)
    with pytest.raises(ValueError, match=r"duplicate id 'item-0039\d'"):
        score_out_of_core(pred, ds, memory_limit="32KiB")


@pytest.mark.parametrize(
    ("text", "bytes_"),
    [("2GB", 2 * 10**9), ("512MiB", 512 << 20), ("1.5g", 1_500_000_000), (100000, 100000)],
)
def test_memory_limits(text: Any, bytes_: int) -> None:
    assert parse_memory_limit(text) == bytes_


@pytest.mark.parametrize("text", ["2XB", "-1GB", "1KB", "", True])
def test_bad_memory_limits(text: Any) -> None:
    with pytest.raises(ValueError, match=r"memory limit|memory_limit"):
        parse_memory_limit(text)


def _runs_reference(y: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import average_precision_score, roc_auc_score

    return float(average_precision_score(y, s)), float(roc_auc_score(y, s))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("levels", [3, 50, 0])
def test_range_reduction_equals_scikit_learn(tmp_path: Path, dtype: Any, levels: int) -> None:
    """Ranges split again on disk (the sample saw one score only), ties across the
    whole range, a range of one distinct score larger than memory."""
    rng = np.random.default_rng(levels)
    n = 5000
    s = rng.random(n) if levels == 0 else np.floor(rng.random(n) * levels) / levels
    s = s.astype(dtype)
    s[:700] = s[0]  # one score held by many rows
    y = rng.random(n) < 0.3
    spill = RangeSpill(tmp_path, 1, np.dtype(dtype), [np.array([float(s[0])])], 1 << 12)
    spill.add(0, s, y)
    spill.flush()
    reducer = RunsReducer()
    reduced, resplit, distinct = reduce_runs(spill, 0, reducer, max_values=600)
    ap, auc = _runs_reference(y, s)
    got = reducer.result()
    assert got.ap == pytest.approx(ap, rel=1e-12)
    assert got.roc_auc == pytest.approx(auc, rel=1e-12)
    assert resplit >= 1 and reduced >= 2
    assert distinct == np.unique(s).size
    assert list(tmp_path.iterdir()) == []  # range files removed once reduced


def test_cli_writes_the_report_without_scored_rows(
    tmp_path: Path, data: dict[str, Any], cli: Callable[..., Any]
) -> None:
    folder = _shards(tmp_path / "one", data, np.array_split(np.arange(700), 2), labels=True)
    out = tmp_path / "out"
    ds = _write_dataset(tmp_path / "dataset.parquet", data)
    pred = _write_predictions(tmp_path / "predictions.parquet", data)
    r = cli("score", str(pred), "--dataset", str(ds), "--out", str(out), "-q", "--bootstrap", "0")
    assert (out / "scored_rows.parquet").exists()  # an in-memory run's rows: stale next
    r = cli(
        "score", str(folder), "--dataset", str(folder), "--memory-limit", "64KiB",
        "--out", str(out), "-q",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "per_category.csv",
        "report.md",
        "results.json",
    ]
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["out_of_core"]["memory_limit_bytes"] == 65536
    assert res["config"]["out_of_core"]["path"] in (TREE, RANGES)
    assert "Not computed out of core." in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--memory-limit", "lots"], "--memory-limit: memory limit 'lots' is not a size"),
        (["--memory-limit", "1GB", "--html", "--out", "o"], "--html does not apply out of core"),
        (["--spill-dir", "nowhere"], "--spill-dir nowhere: not a directory"),
    ],
)
def test_cli_bad_out_of_core_usage_exits_2_with_one_line(
    tmp_path: Path, data: dict[str, Any], cli: Callable[..., Any], extra: list[str], message: str
) -> None:
    folder = _shards(tmp_path / "one", data, [np.arange(700)], labels=True)
    r = cli("score", str(folder), "--dataset", str(folder), *extra)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_schema_mismatch_exits_2(
    tmp_path: Path, data: dict[str, Any], cli: Callable[..., Any]
) -> None:
    folder = _shards(tmp_path / "one", data, np.array_split(np.arange(700), 2), labels=True)
    t = pq.read_table(folder / "part-000.parquet")
    pq.write_table(t.drop_columns(["labels"]), folder / "part-000.parquet")
    r = cli("score", str(folder), "--dataset", str(folder))
    assert r.returncode == 2
    assert "part-001.parquet: column 'labels' is not in part-000.parquet" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_per_category_labels_joined_to_a_scores_object(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    """Labels as one 1/0/null column per category; predictions as a ``scores`` object
    with integer ids on the dataset side (read as their text, as in memory)."""
    n = 700
    ids = np.arange(n)
    labels = {
        c: pa.array(
            [
                int(v) if k else None
                for v, k in zip(data["y"][:, j], data["known"][:, j], strict=True)
            ],
            pa.int8(),
        )
        for j, c in enumerate(TAX.ids)
    }
    ds_table = pa.table({"id": ids, "text": [f"t{i}" for i in ids], **labels})
    pq.write_table(ds_table, tmp_path / "ds.parquet", row_group_size=128)
    scores = pa.StructArray.from_arrays(
        [pa.array(data["s"][:, j]) for j in range(K)], names=list(TAX.ids)
    )
    perm = np.random.default_rng(5).permutation(n)
    pred = pa.table({"id": pa.array([str(i) for i in ids]), "scores": scores}).take(pa.array(perm))
    pq.write_table(pred, tmp_path / "pred.parquet", row_group_size=100)
    want = score(tmp_path / "pred.parquet", tmp_path / "ds.parquet", bootstrap=0)
    got = score(tmp_path / "pred.parquet", tmp_path / "ds.parquet", memory_limit="24KiB")
    _same(got, want)
    assert got.config["out_of_core"]["reason"] == "a memory limit was given"


def test_a_parquet_file_over_the_default_limit_goes_out_of_core(
    tmp_path: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, in_memory: Any
) -> None:
    from toxeval.outofcore import memory

    ds = _write_dataset(tmp_path / "dataset.parquet", data)
    pred = _write_predictions(tmp_path / "predictions.parquet", data)
    monkeypatch.setattr(memory, "default_memory_limit", lambda: 20_000)
    got = score(pred, ds, bootstrap=0)
    assert "default limit" in got.config["out_of_core"]["reason"]
    _same(got, in_memory)


def test_options_that_do_not_apply_out_of_core_are_refused(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    folder = _shards(tmp_path / "one", data, [np.arange(700)], labels=True)
    with pytest.raises(ValueError, match=r"rule='union' does not apply to out-of-core scoring"):
        score(folder, rule="union")
    with pytest.raises(ValueError, match="on_mismatch='drop' does not apply to one table"):
        score(folder, on_mismatch="drop")
    with pytest.raises(ValueError, match="spill_dir applies to out-of-core scoring only"):
        score(_write_predictions(tmp_path / "p.parquet", data), spill_dir=tmp_path)


def test_raw_text_and_annotations_are_refused_with_the_reason(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": ["a", "b"], "output": ["hate", "none"]}), tmp_path / "p.parquet")
    pq.write_table(
        pa.table({"id": ["a", "b"], "annotations": [[["hate"]], [[]]]}), tmp_path / "d.parquet"
    )
    with pytest.raises(ValueError, match="per-annotator 'annotations'"):
        score_out_of_core(tmp_path / "p.parquet", tmp_path / "d.parquet")
    pq.write_table(pa.table({"id": ["a", "b"], "labels": [["hate"], []]}), tmp_path / "d.parquet")
    with pytest.raises(ValueError, match="raw text are parsed in memory"):
        score_out_of_core(tmp_path / "p.parquet", tmp_path / "d.parquet")


def test_spill_files_are_removed(tmp_path: Path, data: dict[str, Any]) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    ds = _shards(tmp_path / "ds", data, np.array_split(np.arange(700), 2), labels=True)
    pred = _shards(tmp_path / "pred", data, np.array_split(np.arange(700), 3), labels=False)
    got = score_out_of_core(pred, ds, memory_limit="16KiB", spill_dir=spill, states_path=RANGES)
    assert got.config["out_of_core"]["join_spill_bytes"] > 0
    assert got.config["out_of_core"]["spill_bytes"] > 0
    assert list(spill.iterdir()) == []


def test_an_id_hashes_the_same_in_any_batch() -> None:
    """The join sends an id to one partition whichever batch it is read in: the hash
    is a function of the string alone (the padded and the polynomial form alike)."""
    from toxeval.outofcore.spill import id_hashes

    ids = pa.array([f"row-{i}" for i in range(3000)] + ["é", "x" * 100, "", "a", "a "])
    whole = id_hashes(ids)
    for lo, hi in [(0, 10), (5, 3000), (2990, 3005), (3000, 3002)]:
        np.testing.assert_array_equal(id_hashes(ids.slice(lo, hi - lo)), whole[lo:hi])
    for i in range(2995, 3005):
        assert id_hashes(ids.slice(i, 1))[0] == whole[i]
    assert whole[3003] != whole[3004]  # "a" and "a " differ
    assert len(np.unique(whole)) == len(whole)


def test_intervals_are_off_out_of_core_and_say_so(
    tmp_path: Path, data: dict[str, Any], cli: Callable[..., Any]
) -> None:
    folder = _shards(tmp_path / "one", data, [np.arange(700)], labels=True)
    got = score(folder, bootstrap=200)
    assert got.figures["intervals"] is None
    assert all(r["ap_ci"] is None for r in got.per_category)
    assert any(
        n.startswith("bootstrap: no intervals out of core (700 scored rows)") for n in got.notes
    )
    out = tmp_path / "out"
    r = cli("score", str(folder), "--dataset", str(folder), "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("compare", str(out), str(out))
    assert r.returncode == 2
    assert "scored out of core, so it keeps no scored_rows.parquet" in r.stderr


def test_the_path_is_chosen_from_the_sample_and_the_size() -> None:
    from toxeval.outofcore.states import choose_path

    rng = np.random.default_rng(0)
    continuous = rng.random((10_000, K))
    quantised = np.round(continuous, 2)
    big = 10**8
    assert choose_path(big, K, quantised, 1 << 30) == TREE  # LLM-like: 101 values
    assert choose_path(big, K, continuous, 1 << 30) == RANGES
    assert choose_path(1000, K, continuous, 1 << 30) == TREE  # small input
    assert choose_path(1000, K, continuous, 1000) == RANGES  # ...not within the state
    assert choose_path(big, K, None, 1 << 30) == RANGES


@pytest.mark.skipif(sys.platform == "win32", reason="flock and SIGKILL")
def test_spill_folders_of_killed_runs_are_removed_by_the_next_run(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    # A run killed with SIGKILL cannot remove its spill folder; the next run in the
    # same --spill-dir removes it (its lock is free), never a folder whose run is alive.
    spill = tmp_path / "spill"
    spill.mkdir()
    code = (
        "import os, signal, sys\n"
        "from toxeval.outofcore.spill_folder import spill_folder\n"
        "with spill_folder(sys.argv[1]) as tmp:\n"
        "    (tmp / 'dataset-00001.arrows').write_bytes(b'x' * 1000)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", code, str(spill)], check=False)
    assert killed.returncode == -signal.SIGKILL
    (dead,) = spill.iterdir()
    with spill_folder(spill) as live:
        assert not dead.exists()  # swept on entry
        (spill / "toxeval-ooc-starting").mkdir()  # no lock yet: a run starting
        (spill / "other").mkdir()
        ds = _shards(tmp_path / "ds", data, np.array_split(np.arange(700), 2), labels=True)
        pred = _shards(tmp_path / "pred", data, np.array_split(np.arange(700), 3), labels=False)
        score_out_of_core(pred, ds, memory_limit="16KiB", spill_dir=spill)
        assert live.is_dir()
    names = sorted(p.name for p in spill.iterdir())
    assert names == ["other", "toxeval-ooc-starting"]


@pytest.mark.parametrize("name", ["bench.pq", "bench.PARQ", "bench.parquet"])
def test_dataset_name_is_the_one_the_in_memory_reader_gives(
    tmp_path: Path, data: dict[str, Any], name: str
) -> None:
    # the out-of-core result stripped ".parquet" only ("bench.pq" stayed "bench.pq")
    ds = _write_dataset(tmp_path / name, data, slice(0, 60))
    pred = _write_predictions(tmp_path / "p.parquet", data, slice(0, 60))
    want = score(pred, ds, bootstrap=0)
    got = score_out_of_core(pred, ds, memory_limit="32KiB")
    assert got.dataset["name"] == want.dataset["name"] == "bench"
