"""Per-category operating points: thresholds for a target precision, recall or FPR against
a brute-force scan of every distinct score and scikit-learn's curves, Wilson intervals
against their formula, the thresholds file, and ``toxeval thresholds``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_curve, roc_curve
from toxeval.cli import main
from toxeval.operating_points import (
    Target,
    apply_thresholds,
    choose_thresholds,
    parse_target,
    read_thresholds,
    wilson_interval,
)
from toxeval.report import write_outputs
from toxeval.scored_rows import read_scored_rows


def _brute(y: np.ndarray, s: np.ndarray, target: Target) -> float | None:
    """Scan every distinct score as a threshold (score >= t flags); for precision the
    most true positives, then the highest threshold giving them."""
    best = None
    best_tp = -1
    pos, neg = int(y.sum()), int((1 - y).sum())
    for t in np.unique(s):
        flag = s >= t
        tp, fp = int((flag & (y == 1)).sum()), int((flag & (y == 0)).sum())
        if target.kind == "precision":
            ok = tp / (tp + fp) >= target.value
            better = tp > best_tp or (tp == best_tp and best is not None and t > best)
        elif target.kind == "recall":
            ok = pos > 0 and tp / pos >= target.value
            better = best is None or t > best
        else:
            ok = neg > 0 and fp / neg <= target.value
            better = best is None or t < best
        if ok and better:
            best, best_tp = float(t), tp
    return best


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=1, max_size=40),
    kind=st.sampled_from(["precision", "recall", "fpr"]),
    value=st.sampled_from([0.0, 0.1, 0.25, 0.5, 2 / 3, 0.8, 0.9, 1.0]),
)
def test_thresholds_equal_a_scan_of_every_score(
    data: list[tuple[bool, int]], kind: str, value: float
) -> None:
    y = np.array([int(a) for a, _ in data])
    s = np.array([b / 6 for _, b in data])  # ties on purpose
    target = Target(kind, value)
    (p,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], target)
    pos, neg = int(y.sum()), int(y.size - y.sum())
    if (kind != "fpr" and pos == 0) or (kind == "fpr" and neg == 0):
        assert p.threshold is None and p.reason
        return
    assert p.threshold == _brute(y, s, target)
    if p.threshold is not None:
        flag = s >= p.threshold
        assert (p.tp, p.fp) == (int((flag & (y == 1)).sum()), int((flag & (y == 0)).sum()))
        assert (p.tp + p.fn, p.fp + p.tn) == (pos, neg)


def test_thresholds_agree_with_scikit_learn_curves() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 500)
    s = np.round(rng.random(500) * 0.6 + y * 0.3, 2)
    prec, rec, thr = precision_recall_curve(y, s)
    (p,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], Target("precision", 0.8))
    best_recall = rec[:-1][prec[:-1] >= 0.8].max()
    assert p.threshold == float(thr[rec[:-1] == best_recall].max())
    (r,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], Target("recall", 0.7))
    assert r.threshold == float(thr[rec[:-1] >= 0.7].max())
    fpr, _, rthr = roc_curve(y, s, drop_intermediate=False)
    (f,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], Target("fpr", 0.1))
    assert f.threshold == float(rthr[fpr <= 0.1].min())


def test_a_precision_target_never_adds_only_false_positives() -> None:
    # scores 1.0 (positive), 0.5 (negative): precision >= 1/3 holds at 0.5 too, which
    # flags the negative for no recall; 1.0 keeps the same recall at precision 1
    y, s = np.array([1, 0]), np.array([1.0, 0.5])
    (p,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], Target("precision", 1 / 3))
    assert (p.threshold, p.tp, p.fp) == (1.0, 1, 0)
    # mid-curve: 0.8 meets 0.5 with (1 TP, 1 FP) and nothing lower does; 0.9 has 1 TP, 0 FP
    y, s = np.array([1, 0, 0, 0, 1]), np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    (p,) = choose_thresholds(y[:, None], s[:, None], None, ["c"], Target("precision", 0.5))
    assert (p.threshold, p.tp, p.fp) == (0.9, 1, 0)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_nan_or_infinite_known_score_is_refused(bad: float) -> None:
    y, s = np.array([[1], [0], [1]]), np.array([[bad], [0.2], [0.5]])
    for target in (Target("recall", 1.0), Target("precision", 0.5)):
        with pytest.raises(ValueError, match="NaN or infinite"):
            choose_thresholds(y, s, None, ["c"], target)
    with pytest.raises(ValueError, match="NaN or infinite"):
        apply_thresholds(y, s, None, ["c"], {"c": 0.3})
    # where the label is unknown the score is not used
    mask = np.array([[False], [True], [True]])
    (p,) = choose_thresholds(y, s, mask, ["c"], Target("recall", 1.0))
    assert (p.threshold, p.tp, p.fp) == (0.5, 1, 0)


def test_masked_labels_are_left_out_per_category() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    s = np.array([[0.9, 0.1], [0.8, 0.7], [0.3, 0.9], [0.2, 0.4]])
    mask = np.array([[True, True], [False, True], [True, True], [True, False]])
    a, b = choose_thresholds(y, s, mask, ["a", "b"], Target("recall", 1.0))
    # a: known rows 0, 2, 3; the unknown row 1 (0.8, a negative if read as 0) is no FP
    assert (a.threshold, a.tp, a.fp, a.fn, a.tn) == (0.3, 2, 0, 0, 1)
    assert (b.threshold, b.tp, b.fp, b.fn, b.tn) == (0.7, 2, 0, 0, 1)


def test_wilson_interval_matches_its_formula() -> None:
    k, n, z = 7, 20, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(centre - half, rel=1e-12)
    assert hi == pytest.approx(centre + half, rel=1e-12)
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (score, no
    # continuity correction), to the 4 decimals printed there
    lo, hi = wilson_interval(k, n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_applied_thresholds_count_each_category() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1]])
    s = np.array([[0.9, 0.1], [0.8, 0.7], [0.3, 0.9]])
    a, b = apply_thresholds(y, s, None, ["a", "b"], {"a": 0.5})
    assert (a.tp, a.fp, a.fn, a.tn) == (1, 1, 1, 0)
    assert b.threshold is None and b.reason == "no threshold given"


@pytest.mark.parametrize("text", ["prec=0.9", "precision", "recall=x", "fpr=1.5", "=0.1"])
def test_bad_targets_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--operating-point"):
        parse_target(text)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ds = toxeval.load_dataset()
    rng = np.random.default_rng(1)
    root = tmp_path_factory.mktemp("op")
    out = {}
    for name in ("dev", "test"):
        scores = np.clip(ds.y_true * 0.4 + rng.random(ds.y_true.shape) * 0.7, 0, 1)
        write_outputs(toxeval.score(scores, ds, bootstrap=20), root / name)
        out[name] = root / name
    return out


def test_cli_chooses_on_one_split_and_measures_on_another(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    saved = tmp_path / "thresholds.json"
    argv = ["thresholds", str(folders["dev"]), "--operating-point", "precision=0.6"]
    assert main([*argv, "--write", str(saved)]) == 0
    doc = json.loads(saved.read_text())
    thresholds = read_thresholds(saved)
    assert doc["target"] == "precision=0.6" and set(thresholds) == set(doc["thresholds"])
    from toxeval.scored_rows import read_scored_rows

    dev = read_scored_rows(folders["dev"] / "scored_rows.parquet")
    expect = choose_thresholds(
        dev.y_true, dev.scores, dev.mask, dev.category_ids, Target("precision", 0.6)
    )
    assert thresholds == {p.category: p.threshold for p in expect}
    capsys.readouterr()
    assert main(["thresholds", str(folders["test"]), "--apply", str(saved)]) == 0
    assert "rates at the thresholds" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give --operating-point"),
        (["--operating-point", "recall=0.5", "--apply", "x.json"], "give --operating-point"),
        (["--apply", "missing.json"], "not a readable thresholds file"),
        (["--operating-point", "recall=2"], "the rate must be in [0, 1]"),
    ],
)
def test_bad_cli_input_exits_2(
    folders: dict[str, Path], extra: list[str], message: str, capsys: Any
) -> None:
    assert main(["thresholds", str(folders["dev"]), *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"c0": 0.1, "c0": 0.9}', "the key 'c0' is given twice"),
        ('{"c0": ' + "1" * 400 + "}", "is " + "1" * 37 + "..., not a finite"),
        ('{"c0": 0.5, "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_a_thresholds_file_a_json_reader_would_misread_is_refused(
    tmp_path: Path, body: str, message: str
) -> None:
    # a duplicate key silently kept the last; a huge integer and deep nesting were
    # internal errors (OverflowError, RecursionError)
    path = tmp_path / "t.json"
    path.write_text('{"format": "toxeval-thresholds/1", "thresholds": ' + body + "}")
    with pytest.raises(ValueError, match=re.escape(message)):
        read_thresholds(path)


def test_a_thresholds_file_with_a_bad_value_or_category_is_refused(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"format": "toxeval-thresholds/1", "thresholds": {"hate": "high"}}))
    assert main(["thresholds", str(folders["dev"]), "--apply", str(f)]) == 2
    assert "not a finite number" in capsys.readouterr().err
    f.write_text(json.dumps({"format": "toxeval-thresholds/1", "thresholds": {"nope": 0.5}}))
    assert main(["thresholds", str(folders["dev"]), "--apply", str(f)]) == 2
    assert "do not have: nope" in capsys.readouterr().err


def _preds(path: Path, seed: int) -> Path:
    """A prediction dump of the demo set: one JSON object of scores per row."""
    ds = toxeval.load_dataset()
    cats = [c.id for c in ds.taxonomy.categories]
    s = np.clip(ds.y_true * 0.4 + np.random.default_rng(seed).random(ds.y_true.shape) * 0.7, 0, 1)
    lines = [
        json.dumps({"id": i, "scores": dict(zip(cats, map(float, r), strict=True))})
        for i, r in zip(ds.ids, s, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_score_chooses_thresholds_into_results_json_and_another_run_measures_them(
    tmp_path: Path, capsys: Any
) -> None:
    dev, test = _preds(tmp_path / "dev.jsonl", 1), _preds(tmp_path / "test.jsonl", 2)
    argv = [
        "score",
        str(dev),
        "--dataset",
        "demo",
        "--bootstrap",
        "0",
        "--out",
        str(tmp_path / "dev"),
    ]
    assert main([*argv, "--operating-point", "fpr=0.05"]) == 0
    out = capsys.readouterr().out
    assert "operating points" in out
    doc = json.loads((tmp_path / "dev" / "results.json").read_text())
    block = doc["operating_points"]
    rows = read_scored_rows(tmp_path / "dev" / "scored_rows.parquet")
    expect = choose_thresholds(
        rows.y_true, rows.scores, rows.mask, rows.category_ids, Target("fpr", 0.05)
    )
    assert block["target"] == "fpr=0.05"
    assert block["thresholds"] == {p.category: p.threshold for p in expect}
    assert "## Operating points" in (tmp_path / "dev" / "report.md").read_text()
    # measured on another split: from the results folder, and from a thresholds file
    for source in (tmp_path / "dev", tmp_path / "file.json"):
        if source.suffix:
            source.write_text(
                json.dumps({"format": "toxeval-thresholds/1", "thresholds": block["thresholds"]})
            )
        out_dir = tmp_path / f"test-{source.name}"
        argv = [
            "score",
            str(test),
            "--dataset",
            "demo",
            "--bootstrap",
            "0",
            "--out",
            str(out_dir),
            "--thresholds-from",
            str(source),
        ]
        assert main(argv) == 0
        got = json.loads((out_dir / "results.json").read_text())["operating_points"]
        trows = read_scored_rows(out_dir / "scored_rows.parquet")
        want = apply_thresholds(
            trows.y_true, trows.scores, trows.mask, trows.category_ids, block["thresholds"]
        )
        assert got["target"] is None and got["thresholds_from"] == str(source)
        assert [(p["tp"], p["fp"], p["fn"], p["tn"]) for p in got["points"]] == [
            (p.tp, p.fp, p.fn, p.tn) for p in want
        ]
    capsys.readouterr()


def test_thresholds_apply_reads_a_results_folder_as_thresholds_from_does(
    tmp_path: Path, capsys: Any
) -> None:
    # --thresholds-from took FILE|DIR, --apply only a file ("not a regular file")
    dev = _preds(tmp_path / "dev.jsonl", 1)
    base = ["score", str(dev), "--dataset", "demo", "--bootstrap", "0", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "dev"), "--operating-point", "recall=0.8"]) == 0
    assert main([*base, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    assert main(["thresholds", str(tmp_path / "plain"), "--apply", str(tmp_path / "dev")]) == 0
    assert "rates at the thresholds" in capsys.readouterr().out
    assert main(["thresholds", str(tmp_path / "dev"), "--apply", str(tmp_path / "plain")]) == 2
    assert "holds no thresholds chosen with --operating-point" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--operating-point", "recall=0.5", "--thresholds-from", "x"], "not both"),
        (["--thresholds-from", "nowhere.json"], "--thresholds-from nowhere.json"),
        (
            ["--operating-point", "recall=0.5", "--dask-local", "1"],
            "needs every scored row in memory",
        ),
    ],
)
def test_score_refuses_bad_operating_point_options(
    tmp_path: Path, extra: list[str], message: str, capsys: Any
) -> None:
    dev = _preds(tmp_path / "dev.jsonl", 1)
    assert main(["score", str(dev), "--dataset", "demo", "--bootstrap", "0", *extra]) == 2
    assert message in capsys.readouterr().err


def test_thresholds_from_a_category_outside_the_given_taxonomy_is_refused_before_work(
    tmp_path: Path, capsys: Any
) -> None:
    # it was refused only once every row was scored (a model run spent for nothing); the
    # predictions file here does not exist, so an error about it means work began first
    bogus = tmp_path / "t.json"
    bogus.write_text('{"format": "toxeval-thresholds/1", "thresholds": {"hate": 0.5, "nope": 1}}')
    argv = ["score", str(tmp_path / "absent.jsonl"), "--dataset", "demo", "--bootstrap", "0"]
    argv += ["--taxonomy", "toxeval-15", "--thresholds-from", str(bogus)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "categories the taxonomy toxeval-15 does not have: nope" in err
    assert len(err.strip().splitlines()) == 1


def test_a_results_folder_without_chosen_thresholds_is_refused(
    folders: dict[str, Path], capsys: Any
) -> None:
    assert main(["evaluate", "--bootstrap", "0", "--thresholds-from", str(folders["dev"])]) == 2
    assert "holds no thresholds chosen with --operating-point" in capsys.readouterr().err


def test_chromium_shows_the_operating_points_of_report_html(
    tmp_path: Path, run_browser: Any, capsys: Any
) -> None:
    out = tmp_path / "out"
    argv = ["evaluate", "--bootstrap", "0", "--operating-point", "precision=0.8"]
    assert main([*argv, "--out", str(out), "--html"]) == 0
    capsys.readouterr()
    block = json.loads((out / "results.json").read_text())["operating_points"]
    proc = run_browser(out / "report.html", "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    table = proc.stdout.split("<h2>Operating points</h2>", 1)[1].split("</table>", 1)[0]
    rows = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    assert len(rows) == len(block["points"]) == 15
    for row, p in zip(rows, block["points"], strict=True):
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert cells[0] == p["category"]
        assert cells[1] == (f"{p['threshold']:.6g}" if p["threshold"] is not None else cells[1])
        assert cells[5:] == [str(p[k]) for k in ("tp", "fp", "fn", "tn")]


def test_write_never_replaces_a_file_of_the_results_folder(
    folders: dict[str, Path], capsys: Any
) -> None:
    results = folders["dev"] / "results.json"
    before = results.read_bytes()
    argv = ["thresholds", str(folders["dev"]), "--operating-point", "recall=0.5"]
    assert main([*argv, "--write", str(results)]) == 2
    assert "is a file of the results folder being read" in capsys.readouterr().err
    assert results.read_bytes() == before


def test_write_replaces_only_an_earlier_thresholds_file(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    # another results folder's results.json (or any file) was silently replaced
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.json").write_text('{"figures": 1}\n')
    argv = ["thresholds", str(folders["dev"]), "--operating-point", "recall=0.5", "--write"]
    assert main([*argv, str(other / "results.json")]) == 2
    assert "exists and is not a thresholds file" in capsys.readouterr().err
    assert (other / "results.json").read_text() == '{"figures": 1}\n'
    saved = tmp_path / "t.json"
    assert main([*argv, str(saved)]) == 0
    assert main([*argv, str(saved)]) == 0  # an earlier thresholds file is replaced


def test_thresholds_from_the_out_folder_itself_is_refused(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "o"
    assert (
        main(["evaluate", "--bootstrap", "0", "--operating-point", "recall=0.5", "--out", str(out)])
        == 0
    )
    before = (out / "results.json").read_bytes()
    capsys.readouterr()
    assert (
        main(["evaluate", "--bootstrap", "0", "--thresholds-from", str(out), "--out", str(out)])
        == 2
    )
    assert "would overwrite the input file" in capsys.readouterr().err
    assert (out / "results.json").read_bytes() == before


def test_a_thresholds_file_that_is_a_named_pipe_is_refused_not_waited_on(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    import os

    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    assert main(["thresholds", str(folders["dev"]), "--apply", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err
