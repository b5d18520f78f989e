"""toxeval.plots and ``--plots``: per-category precision-recall curves over the known rows
only, AP bars, visual-only thinning of million-point curves, no display or backend touched,
a clear error without matplotlib, and the CLI writing both figures into --out."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from helpers import write_jsonl
from toxeval import plots
from toxeval.cli import main
from toxeval.detectors import get_detector
from toxeval.plots import (
    ap_by_category_figure,
    plot_ap_by_category,
    plot_pr_curves,
    pr_curves_figure,
)

pytest.importorskip("matplotlib")
skm = pytest.importorskip("sklearn.metrics")

REPO = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TITLE = re.compile(
    r"^(?P<id>\S+)  AP=(?P<ap>n/a|\d\.\d{3})(\n(?P<pos>\d+) pos / (?P<known>\d+) known)?$"
)


@pytest.fixture(scope="module")
def demo() -> tuple[Any, np.ndarray]:
    ds = toxeval.load_dataset()
    scores = get_detector("lexicon", ds.taxonomy).predict_scores(ds.texts)
    return ds, scores


def _png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _check_png(path: Path, min_w: int = 600, min_h: int = 300) -> None:
    from matplotlib.image import imread

    assert path.is_file()
    w, h = _png_size(path)
    assert min_w <= w <= 5000 and min_h <= h <= 5000, (w, h)
    img = imread(path)
    assert img.shape[:2] == (h, w) and img.shape[2] in (3, 4)
    assert path.stat().st_size > 10_000
    assert float(img[..., :3].std()) > 0.01  # something is drawn, not a blank canvas


def _titles(fig: Any) -> list[str]:
    return [ax.get_title() for ax in fig.axes]


def _title_ap(title: str) -> str:
    m = _TITLE.match(title)
    assert m, title
    return m["ap"]


def _curve_line(ax: Any) -> Any:
    lines = [ln for ln in ax.get_lines() if ln.get_drawstyle() == "steps-post"]
    assert len(lines) <= 1
    return lines[0] if lines else None


def _known_ap(y: np.ndarray, s: np.ndarray, m: np.ndarray, k: int) -> float:
    known = m[:, k]
    return float(skm.average_precision_score(y[known, k], s[known, k]))


# --------------------------------------------------------------------------- PR curves


def test_pr_curves_png_is_written_and_valid(tmp_path: Path, demo: tuple[Any, np.ndarray]) -> None:
    ds, scores = demo
    out = plot_pr_curves(ds.y_true, scores, ds.mask, ds.taxonomy, tmp_path / "pr.png")
    assert out == tmp_path / "pr.png"
    _check_png(out, min_w=1000, min_h=600)


def test_one_panel_per_category_in_taxonomy_order_with_masked_ap(
    demo: tuple[Any, np.ndarray],
) -> None:
    ds, scores = demo
    fig = pr_curves_figure(ds.y_true, scores, ds.mask, ds.taxonomy)
    titles = _titles(fig)
    assert len(fig.axes) == ds.k == 15
    assert [t.split("  ")[0] for t in titles] == list(ds.taxonomy.ids)
    result = toxeval.score(scores, ds)
    for k, (title, row) in enumerate(zip(titles, result.per_category, strict=True)):
        # the panel's AP is the report's and scikit-learn's on the known rows
        assert (
            _title_ap(title)
            == f"{row['ap']:.3f}"
            == f"{_known_ap(ds.y_true, scores, ds.mask, k):.3f}"
        )
        # the counts are in the title, over the known rows; nothing is written inside
        # the axes, where it would cover the low-recall end of the curve
        counts = _TITLE.match(title)
        assert counts is not None
        assert (
            int(counts["pos"]) == row["support"] == int((ds.y_true[:, k][ds.mask[:, k]] == 1).sum())
        )
        assert int(counts["known"]) == int(ds.mask[:, k].sum())
        assert len(fig.axes[k].texts) == 0
    # the demo set has unknown cells: the first category's curve is over its known rows
    assert int((~ds.mask[:, 0]).sum()) > 0


def test_curve_is_the_drop_in_curve_step_drawn_with_the_no_skill_line() -> None:
    rng = np.random.default_rng(1)
    y = (rng.random((200, 3)) < 0.3).astype(np.int8)
    s = np.round(rng.random((200, 3)), 2)  # ties
    m = rng.random((200, 3)) > 0.2
    fig = pr_curves_figure(y, s, m, ["a", "b", "c"])
    for k, ax in enumerate(fig.axes):
        known = m[:, k]
        precision, recall, _ = toxeval.metrics.precision_recall_curve(y[known, k], s[known, k])
        line = _curve_line(ax)
        assert line is not None
        np.testing.assert_array_equal(line.get_xdata(), recall)  # short: nothing thinned
        np.testing.assert_array_equal(line.get_ydata(), precision)
        rate = y[known, k].sum() / known.sum()
        dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert len(dashed) == 1
        np.testing.assert_allclose(dashed[0].get_ydata(), [rate, rate])


@pytest.mark.parametrize("k", [1, 4, 7, 15])
def test_panel_count_for_any_taxonomy_size(k: int) -> None:
    rng = np.random.default_rng(k)
    y = (rng.random((50, k)) < 0.4).astype(np.int8)
    fig = pr_curves_figure(y, rng.random((50, k)), None, [f"c{i}" for i in range(k)])
    assert len(fig.axes) == k
    assert [t.split("  ")[0] for t in _titles(fig)] == [f"c{i}" for i in range(k)]


def test_taxonomy_as_object_name_or_ids_gives_the_same_panels(
    demo: tuple[Any, np.ndarray],
) -> None:
    ds, scores = demo
    got = [
        _titles(pr_curves_figure(ds.y_true, scores, ds.mask, tax))
        for tax in (ds.taxonomy, "toxeval-15", list(ds.taxonomy.ids))
    ]
    assert got[0] == got[1] == got[2]


def test_masked_cells_are_excluded_from_the_curve_and_ap() -> None:
    y = np.array([[1], [0], [1], [0]], dtype=np.int8)
    s = np.array([[0.9], [0.8], [0.3], [0.1]])
    everything = pr_curves_figure(y, s, None, ["c"])
    assert _titles(everything) == ["c  AP=0.833\n2 pos / 4 known"]  # (1 + 2/3) / 2
    mask = np.array([[True], [False], [True], [True]])
    masked = pr_curves_figure(y, s, mask, ["c"])
    assert _titles(masked) == ["c  AP=1.000\n2 pos / 3 known"]  # the 0.8 negative is unknown
    # an unknown cell's label is never read: a garbage value there changes nothing
    y_bad = y.copy()
    y_bad[1, 0] = -7
    assert _titles(pr_curves_figure(y_bad, s, mask, ["c"])) == ["c  AP=1.000\n2 pos / 3 known"]
    line = _curve_line(masked.axes[0])
    assert len(line.get_xdata()) == 4  # 3 known rows, 3 thresholds, + the (0, 1) end


def test_category_without_known_positive_gets_a_note_not_a_crash(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    y = (rng.random((40, 3)) < 0.5).astype(np.int8)
    y[:, 1] = 0  # no positive at all
    m = np.ones_like(y, dtype=bool)
    m[:, 2] = y[:, 2] == 0  # positives exist, but none is known
    y[0, 2] = 1
    m[0, 2] = False
    fig = pr_curves_figure(y, rng.random((40, 3)), m, ["a", "b", "c"])
    assert _title_ap(fig.axes[0].get_title()) != "n/a"
    for ax in fig.axes[1:]:
        assert _title_ap(ax.get_title()) == "n/a"
        assert _curve_line(ax) is None
        assert any("no known positive" in t.get_text() for t in ax.texts)
    # the report's reason is said: a system that gives no score is not a category
    # without positives
    fig = pr_curves_figure(
        y,
        rng.random((40, 3)),
        m,
        ["a", "b", "c"],
        ap_undefined_reasons=[None, "no known positive", "no score from the system"],
    )
    assert any("no known positive" in t.get_text() for t in fig.axes[1].texts)
    texts = [t.get_text() for t in fig.axes[2].texts]
    assert any("no score from the system" in t for t in texts), texts
    assert not any("no known positive" in t for t in texts), texts
    # a column with no known cell at all
    m[:, 1] = False
    out = plot_pr_curves(y, rng.random((40, 3)), m, ["a", "b", "c"], tmp_path / "x.png")
    _check_png(out)


def test_bad_shapes_raise_value_error() -> None:
    y = np.zeros((10, 3), dtype=np.int8)
    y[0] = 1
    with pytest.raises(ValueError, match="taxonomy has 3"):
        pr_curves_figure(y[:, :2], np.zeros((10, 2)), None, ["a", "b", "c"])
    with pytest.raises(ValueError, match="y_score has shape"):
        pr_curves_figure(y, np.zeros((10, 2)), None, ["a", "b", "c"])
    with pytest.raises(ValueError, match="mask has shape"):
        pr_curves_figure(y, np.zeros((10, 3)), np.ones((9, 3), bool), ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\(N, K\)"):
        pr_curves_figure(y[:, 0], np.zeros(10), None, ["a"])


def test_mask_is_checked_as_the_metrics_check_it() -> None:
    # A mask that is not boolean (or 0/1 integers) is refused, not cast: a float mask of
    # 0.5 or NaN would otherwise turn unknown cells into known ones.
    y = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.int8)
    s = np.zeros((3, 2))
    for bad in (np.full((3, 2), 0.5), np.full((3, 2), np.nan), np.full((3, 2), 2)):
        with pytest.raises(ValueError, match="mask must be a boolean array"):
            pr_curves_figure(y, s, bad, ["a", "b"])
    fig = pr_curves_figure(y, s, np.ones((3, 2), dtype=np.int64), ["a", "b"])
    assert len(fig.axes) == 2


def test_other_suffix_writes_that_format(tmp_path: Path) -> None:
    y = np.array([[1], [0], [1]], dtype=np.int8)
    out = plot_pr_curves(y, np.array([[0.9], [0.2], [0.4]]), None, ["c"], tmp_path / "pr.svg")
    assert out.read_text(encoding="utf-8").lstrip().startswith("<?xml")


# --------------------------------------------------------------------------- thinning


def _staircase(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A long, PR-like curve (recall decreasing to 0, noisy precision) with two big jumps."""
    rng = np.random.default_rng(seed)
    recall = np.sort(rng.random(n))[::-1].copy()
    recall[-1] = 0.0
    precision = np.clip(0.5 + np.cumsum(rng.normal(0, 0.001, n)), 0, 1)
    precision[n // 3 :] -= 0.3
    precision[-1] = 1.0
    return recall, np.clip(precision, 0, 1)


@pytest.mark.parametrize("cap", [2, 3, 5, 100, 2000])
def test_thinning_keeps_first_last_largest_jump_and_at_most_the_cap(cap: int) -> None:
    recall, precision = _staircase(300_000)
    idx = plots.thin_curve_indices(recall, precision, cap)
    assert len(idx) <= cap
    assert idx[0] == 0 and idx[-1] == len(recall) - 1
    assert np.all(np.diff(idx) > 0)  # sorted, unique: the curve's order is kept
    if cap >= 6:
        jump = int(np.argmax(np.abs(np.diff(precision))))  # the -0.3 step
        assert jump in idx and jump + 1 in idx


def test_thinning_keeps_the_ends_of_a_curve_with_flat_stretches() -> None:
    # a constant tail moves no path length: the last point is kept all the same
    recall = np.linspace(1.0, 0.0, 10_000)
    recall[5000:] = 0.5
    precision = np.ones_like(recall)
    precision[:100] = 0.2
    idx = plots.thin_curve_indices(recall, precision, 50)
    assert len(idx) <= 50 and idx[0] == 0 and idx[-1] == 9999


def test_thinning_is_visually_faithful() -> None:
    recall, precision = _staircase(200_000, seed=3)
    idx = plots.thin_curve_indices(recall, precision, 2000)
    assert len(idx) > 1000  # the budget is used
    # every dropped point lies near the kept point drawn just before it
    prev = idx[np.searchsorted(idx, np.arange(len(recall)), side="right") - 1]
    err = np.abs(recall - recall[prev]) + np.abs(precision - precision[prev])
    length = np.abs(np.diff(recall)).sum() + np.abs(np.diff(precision)).sum()
    assert 0 < err.max() < 2 * length / 2000  # the bound docs/python-api.md states


def test_short_curves_are_not_thinned_and_a_cap_below_2_is_refused() -> None:
    r = np.linspace(1, 0, 50)
    np.testing.assert_array_equal(plots.thin_curve_indices(r, r, 50), np.arange(50))
    with pytest.raises(ValueError, match="at least 2"):
        plots.thin_curve_indices(r, r, 1)


def test_large_input_is_thinned_for_drawing_but_ap_uses_every_point() -> None:
    rng = np.random.default_rng(4)
    n = 300_000
    y = (rng.random((n, 2)) < 0.1).astype(np.int8)
    s = np.clip(0.25 * y + rng.random((n, 2)), 0, 1)  # ~n distinct scores per column
    m = rng.random((n, 2)) > 0.1
    fig = pr_curves_figure(y, s, m, ["a", "b"], max_points=500)
    for k, ax in enumerate(fig.axes):
        x = _curve_line(ax).get_xdata()
        _, recall, _ = toxeval.metrics.precision_recall_curve(y[m[:, k], k], s[m[:, k], k])
        assert len(recall) > 100_000 and len(x) <= 500
        assert x[0] == recall[0] and x[-1] == recall[-1]
        assert _title_ap(ax.get_title()) == f"{_known_ap(y, s, m, k):.3f}"
    notes = " ".join(t.get_text().replace("\n", " ") for t in fig.texts)
    assert "thinned to at most 500 points" in notes and "AP uses every point" in notes


# --------------------------------------------------------------------------- AP bars


def _result_with_excluded(demo: tuple[Any, np.ndarray]) -> Any:
    ds, scores = demo
    m = ds.mask.copy()
    m[:, 3] &= ds.y_true[:, 3] == 0  # self_harm: no known positive left
    return toxeval.score(scores, dataclasses.replace(ds, mask=m))


def test_ap_by_category_bars_line_and_excluded_hatched(
    tmp_path: Path, demo: tuple[Any, np.ndarray]
) -> None:
    result = _result_with_excluded(demo)
    assert result.excluded_categories == ["self_harm"]
    fig = ap_by_category_figure(result)
    (ax,) = fig.axes
    bars = ax.patches
    assert len(bars) == len(result.per_category)
    hatched = [b for b in bars if b.get_hatch()]
    assert len(hatched) == 1
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [r["id"] for r in result.per_category]
    for bar, row in zip(bars, result.per_category, strict=True):
        if row["in_map"]:
            assert not bar.get_hatch()
            assert bar.get_width() == pytest.approx(row["ap"])
        else:
            assert bar.get_hatch() and row["id"] == "self_harm"
    vlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(vlines) == 1
    assert vlines[0].get_xdata()[0] == pytest.approx(result.map)
    text = " ".join(t.get_text() for t in ax.texts) + ax.get_xlabel()
    assert "excluded from mAP" in text and "self_harm" in ax.get_xlabel()
    out = plot_ap_by_category(result, tmp_path / "ap.png")
    assert out == tmp_path / "ap.png"
    _check_png(out)


def test_ap_by_category_without_exclusions(demo: tuple[Any, np.ndarray]) -> None:
    ds, scores = demo
    result = toxeval.score(scores, ds)
    fig = ap_by_category_figure(result, title="my model")
    (ax,) = fig.axes
    assert ax.get_title() == "my model"
    assert not [b for b in ax.patches if b.get_hatch()]
    assert "excluded" not in ax.get_xlabel()


# --------------------------------------------------------------------------- matplotlib


def test_missing_matplotlib_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, demo: tuple[Any, np.ndarray]
) -> None:
    ds, scores = demo
    result = toxeval.score(scores, ds)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    hint = re.escape('pip install "toxeval[plot]"')
    with pytest.raises(ImportError, match=hint):
        plot_pr_curves(ds.y_true, scores, ds.mask, ds.taxonomy, tmp_path / "pr.png")
    with pytest.raises(ImportError, match=hint):
        plot_ap_by_category(result, tmp_path / "ap.png")
    assert not list(tmp_path.iterdir())


def test_missing_matplotlib_cli_exits_2_before_any_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "out"
    assert main(["evaluate", "--plots", "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toxeval: error: --plots: ") and len(err.strip().splitlines()) == 1
    assert 'pip install "toxeval[plot]"' in err
    assert not out.exists()


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        cwd=REPO,
    )


def test_import_is_lazy_and_plotting_never_touches_pyplot_or_the_backend(
    tmp_path: Path,
) -> None:
    code = f"""
import sys
import numpy as np
import toxeval.plots as p
assert "matplotlib" not in sys.modules, "imported at import time"
y = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.int8)
p.plot_pr_curves(y, np.random.default_rng(0).random((3, 2)), None, ["a", "b"],
                 {str(tmp_path / "pr.png")!r})
assert "matplotlib.pyplot" not in sys.modules, "pyplot imported"
import matplotlib
assert dict.__getitem__(matplotlib.rcParams, "backend") == "module://no_such_backend"
print("ok")
"""
    # a backend that cannot load: only code that selects a backend would fail
    r = _python(code, env={"MPLBACKEND": "module://no_such_backend"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    _check_png(tmp_path / "pr.png", min_w=300, min_h=200)


# --------------------------------------------------------------------------- CLI


@pytest.mark.slow
def test_cli_evaluate_plots_writes_both_files_and_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["evaluate", "--plots", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    listed = [ln for ln in stdout.splitlines() if ln.startswith("wrote ")]
    assert listed == [
        "wrote results.json, report.md, per_category.csv, scored_rows.parquet, pr_curves.png, "
        f"ap_by_category.png to {out}"
    ]
    _check_png(out / "pr_curves.png", min_w=1000, min_h=600)
    _check_png(out / "ap_by_category.png")
    # without --plots: no figure, and the listing does not name one
    assert main(["evaluate", "--out", str(tmp_path / "plain")]) == 0
    assert "png" not in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == [
        ".toxeval-outputs.json",  # the manifest of what toxeval wrote there
        "per_category.csv",
        "report.md",
        "results.json",
        "scored_rows.parquet",
    ]


def test_cli_score_plots_use_the_scored_rows_and_known_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo: tuple[Any, np.ndarray]
) -> None:
    ds, scores = demo
    dump = tmp_path / "preds.jsonl"
    rows = list(zip(ds.ids, scores, strict=True))[5:]  # 5 rows missing
    write_jsonl(dump, [{"id": id_, "scores": row.tolist()} for id_, row in rows])
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    real = plots.plot_pr_curves

    def spy(y: Any, s: Any, m: Any, *args: Any, **kwargs: Any) -> Path:
        seen.append((np.array(y), np.array(s), np.array(m)))
        return real(y, s, m, *args, **kwargs)

    monkeypatch.setattr(plots, "plot_pr_curves", spy)
    out = tmp_path / "out"
    args = ["score", str(dump), "--dataset", "demo", "--on-mismatch", "drop"]
    assert main([*args, "--plots", "--out", str(out), "-q"]) == 0
    _check_png(out / "pr_curves.png", min_w=1000, min_h=600)
    _check_png(out / "ap_by_category.png")
    ((y, s, m),) = seen
    doc = json.loads((out / "results.json").read_text())
    assert y.shape == (doc["counts"]["scored"], ds.k) == (len(ds) - 5, ds.k)
    np.testing.assert_array_equal(y, ds.y_true[5:])
    np.testing.assert_array_equal(m, ds.mask[5:])
    np.testing.assert_allclose(s, scores[5:])
    for k, row in enumerate(doc["per_category"]):
        assert _known_ap(y, s, m, k) == pytest.approx(row["ap"])


@pytest.mark.parametrize("command", [["evaluate"], ["score", "p.jsonl", "--dataset", "demo"]])
def test_cli_plots_without_out_exits_2(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--plots"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toxeval: error: ")
    assert "--plots" in err and "--out DIR" in err and "Traceback" not in err


def test_cli_plots_without_out_exits_2_subprocess() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "toxeval.cli", "evaluate", "--plots"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert r.returncode == 2
    assert r.stderr.startswith("toxeval: error: --plots") and "--out DIR" in r.stderr
    assert r.stdout == ""


def test_cli_plots_step_is_timed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOXEVAL_TIMINGS", "1")
    assert main(["evaluate", "--plots", "--out", str(tmp_path), "-q"]) == 0
    line = next(
        ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("toxeval: timings: ")
    )
    steps = json.loads(line.removeprefix("toxeval: timings: "))
    assert list(steps)[-2:] == ["writing outputs", "plotting"]


def test_long_titles_are_wrapped_to_the_figure_width(tmp_path: Path) -> None:
    # a K=2 figure is 6 inches wide: a long dataset path in the title must wrap, not be
    # clipped at both ends by the layout
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.int8)
    s = np.array([[0.9, 0.2], [0.3, 0.8], [0.6, 0.7], [0.1, 0.4]])
    title = "Precision-recall per category: /a/rather/long/path/" + "x" * 150 + "/preds.jsonl"
    fig = pr_curves_figure(y, s, None, ["a", "b"], title=title)
    shown = fig._suptitle.get_text()  # where matplotlib keeps it
    assert "".join(shown.split()) == "".join(title.split())  # all of it, wrapped
    width_chars = 6.0 * 72 / (0.6 * 11)  # what fits at 11 pt
    assert all(len(line) <= width_chars for line in shown.split("\n"))
    assert shown.count("\n") >= 2
    _check_png(plot_pr_curves(y, s, None, ["a", "b"], tmp_path / "k2.png", title=title))


def test_long_category_ids_are_wrapped_not_run_into_each_other(tmp_path: Path) -> None:
    """A user taxonomy's long ids: panel titles ran into the next panel and past the
    figure's edge; they are wrapped at their words and stay apart, whole."""
    from toxeval.plots import ap_by_category_figure, pr_curves_figure

    ids = [
        "hate_speech_targeting_protected_characteristics_of_groups",
        "violence",
        "harassment_bullying_and_targeted_intimidation_of_individuals",
    ]
    rng = np.random.default_rng(1)
    y = (rng.random((60, 3)) < 0.3).astype(int)
    y[0] = 1
    s = np.clip(y * 0.4 + rng.random(y.shape) * 0.7, 0, 1)
    fig = pr_curves_figure(y, s, None, ids)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    width = fig.bbox.width
    for i, a in enumerate(boxes):
        assert a.x0 >= 0 and a.x1 <= width, ids[i]
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b)
    for cid, ax in zip(ids, fig.axes, strict=True):
        first = ax.get_title().rsplit("\n", 1)[0]  # the id and AP, above the counts line
        assert first.replace("\n", "").split("  ")[0] == cid
    toml = 'name = "long-3"\nversion = "1"\n' + "".join(
        f'[[category]]\nid = "{c}"\nname = "{c}"\n' for c in ids
    )
    (tmp_path / "long.toml").write_text(toml, encoding="utf-8")
    rows = [
        {"id": f"r{i}", "text": "t", "labels": [c for c, v in zip(ids, row, strict=True) if v]}
        for i, row in enumerate(y)
    ]
    write_jsonl(tmp_path / "ds.jsonl", rows)
    ds = toxeval.load_dataset(tmp_path / "ds.jsonl", taxonomy=tmp_path / "long.toml")
    result = toxeval.score(s, ds, bootstrap=0)
    bars = ap_by_category_figure(result)
    bars.canvas.draw()
    r = bars.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = bars.axes[0].get_yticklabels()
    assert [t.get_text().replace("\n", "") for t in labels] == ids
    assert all(t.get_window_extent(r).x0 >= 0 for t in labels)
