"""``report.html``: self-contained, correct content, and loaded by a real browser
(headless Chromium, offline) without console errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from toxeval.html_report import cooccurrence, render_html


@pytest.fixture(scope="module")
def demo() -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The default evaluation, with its bootstrap intervals (200 resamples here)."""
    result = toxeval.evaluate(bootstrap=200)
    assert result.rows is not None
    return result.to_dict(), (result.rows.y_true, result.rows.scores, result.rows.mask)


def test_cooccurrence_counts_known_cells_only() -> None:
    y = np.array([[1, 0], [1, 1], [0, 1]])
    s = np.array([[0.9, 0.8], [0.2, 0.7], [0.9, 0.1]])
    m = np.array([[True, True], [True, False], [True, True]])
    # row 0: true {0}, predicted {0, 1}; row 1: true {0} (cell 1 unknown), predicted {};
    # row 2: true {1}, predicted {0}
    assert cooccurrence(y, s, m, 0.5).tolist() == [[1, 1], [1, 0]]


def test_page_is_self_contained_and_escapes_user_text(demo: Any) -> None:
    data, arrays = demo
    data = {**data, "dataset": {**data["dataset"], "name": "<script>alert(1)</script>"}}
    page = render_html(data, arrays)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # nothing is loaded from anywhere: no src/href attributes, no url() in styles
    assert not re.search(r"""\b(src|href)\s*=""", page)
    assert "url(" not in page and "@import" not in page
    # headline figures, interval, one row and one curve per category, the heatmap
    lo, hi = data["figures"]["intervals"]["map"]
    assert "0.8744" in page and f"95% CI [{lo:.4f}, {hi:.4f}]" in page
    assert "200 resamples, seed 0, confidence 95%" in page
    table = page.split('id="per-category"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr><td class=l") == 15
    assert page.count("<polyline") == 15
    assert "true hate, predicted hate:" in page


def test_without_arrays_the_page_says_what_is_missing(demo: Any) -> None:
    data, _ = demo
    page = render_html(data)
    assert "Needs the scored rows" in page and "<polyline" not in page


def test_chromium_loads_the_page_offline_without_console_errors(
    demo: Any, run_browser: Any, tmp_path: Path
) -> None:
    data, arrays = demo
    page = tmp_path / "report.html"
    page.write_text(render_html(data, arrays), encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = run_browser(page, "--window-size=1200,1600", f"--screenshot={shot}")
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
    assert shot.is_file()
    import matplotlib.image as mpimg

    img = mpimg.imread(str(shot))[..., :3]
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    # not blank: a good share of the pixels is not white, and there are many colours
    non_white = float((img.mean(axis=2) < 0.95).mean())
    assert non_white > 0.05, non_white
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50


def test_chromium_sorts_the_category_table(demo: Any, run_browser: Any, tmp_path: Path) -> None:
    """Clicking the AP header twice sorts the rows by AP, descending (the page's own script,
    driven by a click added to a copy of the page)."""
    data, arrays = demo
    click = (
        "<script>var th=document.querySelectorAll('#per-category th')[2];"
        "th.click();th.click();</script></body>"
    )
    page = tmp_path / "report.html"
    page.write_text(render_html(data, arrays).replace("</body>", click), encoding="utf-8")
    proc = run_browser(page, "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    table = proc.stdout.split('id="per-category"', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    shown = [float(re.findall(r'data-v="([^"]*)"', row)[2]) for row in rows]
    aps = sorted((c["ap"] for c in data["per_category"]), reverse=True)
    assert shown == pytest.approx(aps)
    assert 'aria-sort="descending"' in table
    # each row's AP interval moved with it: the browser shows the result's ap_ci
    by_id = {c["id"]: c["ap_ci"] for c in data["per_category"]}
    for row in rows:
        cid = re.findall(r'data-v="([^"]*)"', row)[0]
        lo, hi = by_id[cid]
        assert f"[{lo:.3f}, {hi:.3f}]" in row, row


def test_cli_html_and_scored_rows_are_written_beside_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toxeval.cli import main
    from toxeval.scored_rows import read_scored_rows

    out = tmp_path / "out"
    assert main(["evaluate", "--out", str(out), "--html", "--quiet"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "0.8744" in page and page.count("<polyline") == 15
    rows = read_scored_rows(out / "scored_rows.parquet")
    ds = toxeval.load_dataset()
    assert rows.ids == tuple(ds.ids)
    assert np.array_equal(rows.mask, ds.mask)
    assert np.array_equal(rows.y_true, np.where(ds.mask, ds.y_true, 0))
    capsys.readouterr()
    assert main(["evaluate", "--html", "--quiet"]) == 2
    assert "--html writes report.html into the --out directory" in capsys.readouterr().err


def _curves_svg(page: str) -> str:
    return page.split("<title>Precision-recall curves per category</title>", 1)[1].split(
        "</svg>", 1
    )[0]


def test_step_points_are_matplotlibs_steps_post() -> None:
    """The rule PrecisionRecallDisplay and the PNG figure draw with: drawstyle steps-post
    on recall/precision (matplotlib's own conversion is the oracle)."""
    from matplotlib.cbook import pts_to_poststep
    from toxeval.html_report import step_points

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 50):
        x, y = rng.random(n), rng.random(n)
        want = pts_to_poststep(x, y)
        got = step_points(x, y)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_pr_curves_are_steps_on_labelled_axes(demo: Any) -> None:
    """Each curve is the steps-post drawing of its precision-recall curve (every segment
    horizontal then vertical, one vertex per step), on axes with ticks 0, 0.5, 1 and the
    labels recall and precision; straight lines between points were drawn before."""
    from toxeval.metrics import precision_recall_curve

    data, (y, s, m) = demo
    svg = _curves_svg(render_html(data, (y, s, m)))
    polylines = re.findall(r'<polyline points="([^"]*)"', svg)
    assert len(polylines) == 15
    for j, pts in enumerate(polylines):
        xy = np.array([[float(v) for v in p.split(",")] for p in pts.split()])
        known = m[:, j]
        _, recall, _ = precision_recall_curve(y[known, j] == 1, s[known, j])
        assert len(recall) <= 400  # not thinned: one drawn step per point of the curve
        assert len(xy) == 2 * len(recall) - 1
        dx, dy = np.diff(xy[:, 0]), np.diff(xy[:, 1])
        assert np.all(dy[0::2] == 0), j  # across to the next recall at this precision
        assert np.all(dx[1::2] == 0), j  # then up or down to the next precision
    k = len(data["per_category"])
    assert svg.count(">recall</text>") == k and svg.count(">precision</text>") == k
    for tick in ("0", "0.5", "1"):
        assert svg.count(f'text-anchor="middle">{tick}</text>') == k  # x ticks
        assert svg.count(f'text-anchor="end">{tick}</text>') == k  # y ticks


LONG_IDS = (
    "hate_speech_targeting_protected_characteristics_of_groups",
    "violence",
    "self_harm_and_suicide_ideation_or_instructions",
    "harassment_bullying_and_targeted_intimidation_of_individuals",
)

# Written into the page after it loads: every SVG text that reaches outside its figure,
# and whether the per-category table is wider than the page, as a JSON attribute of body.
_MEASURE = """<script>
var out=[];
document.querySelectorAll('svg').forEach(function(svg){
  var box=svg.getBoundingClientRect();
  svg.querySelectorAll('text').forEach(function(t){
    var r=t.getBoundingClientRect();
    if(r.left<box.left-0.5||r.right>box.right+0.5||r.top<box.top-0.5||r.bottom>box.bottom+0.5)
      out.push(t.textContent);
  });
});
var wide=document.querySelector('#per-category').parentNode;
document.body.setAttribute('data-check',JSON.stringify({clipped:out,
  table_overflow:wide.scrollWidth-wide.clientWidth}));
</script></body>"""


def test_chromium_shows_long_category_names_whole_inside_every_figure(
    run_browser: Any, tmp_path: Path
) -> None:
    """A user taxonomy with long names (--taxonomy FILE): the table wraps them instead of
    running past the page, and no label of the AP bars, the curves or the heatmap reaches
    outside its figure (they were cut at the left edge)."""
    import html as html_lib
    import json

    from helpers import write_jsonl

    toml = 'name = "long-4"\nversion = "1"\n' + "".join(
        f'[[category]]\nid = "{c}"\nname = "{c.replace("_", " ").title()} And More Words"\n'
        for c in LONG_IDS
    )
    (tmp_path / "long.toml").write_text(toml, encoding="utf-8")
    rng = np.random.default_rng(0)
    rows = [
        {"id": f"r{i}", "text": f"t{i}", "labels": [c for c in LONG_IDS if rng.random() < 0.3]}
        for i in range(120)
    ]
    write_jsonl(tmp_path / "ds.jsonl", rows)
    ds = toxeval.load_dataset(tmp_path / "ds.jsonl", taxonomy=tmp_path / "long.toml")
    scores = np.clip(ds.y_true * 0.4 + rng.random(ds.y_true.shape) * 0.7, 0, 1)
    result = toxeval.score(scores, ds, bootstrap=50)
    assert result.rows is not None
    arrays = (result.rows.y_true, result.rows.scores, result.rows.mask)
    page = tmp_path / "report.html"
    page.write_text(
        render_html(result.to_dict(), arrays).replace("</body>", _MEASURE), encoding="utf-8"
    )
    proc = run_browser(page, "--window-size=1200,1600", "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    found = re.search(r'data-check="([^"]*)"', proc.stdout)
    assert found, proc.stdout[-500:]
    check = json.loads(html_lib.unescape(found.group(1)))
    assert check == {"clipped": [], "table_overflow": 0}
