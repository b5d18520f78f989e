"""The report's files show user text (taxonomy and category names, dataset names, file
names) as written: ``per_category.csv`` cells a spreadsheet would run as formulas are
quoted as text, and ``report.md`` escapes what Markdown would read as table cells,
emphasis, links or HTML."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np
import toxeval
from helpers import make_dataset
from toxeval.report import per_category_csv
from toxeval.taxonomy import Category, Taxonomy

FORMULA_NAMES = ('=HYPERLINK("http://x","a")', "+1+1", "-2+3", "@SUM(A1)", "plain")


def _result(names: tuple[str, ...], taxonomy_name: str = "t") -> Any:
    tax = Taxonomy(
        name=taxonomy_name,
        version="1",
        categories=tuple(
            Category(id=f"c{i}", name=n, description="d") for i, n in enumerate(names)
        ),
    )
    rng = np.random.default_rng(0)
    y = (rng.random((30, len(names))) < 0.4).astype(np.int8)
    ds = make_dataset(y, taxonomy=tax)
    return toxeval.score(rng.random(y.shape), ds, bootstrap=0)


def test_per_category_csv_quotes_names_a_spreadsheet_would_run() -> None:
    rows = list(csv.DictReader(io.StringIO(per_category_csv(_result(FORMULA_NAMES)))))
    shown = [r["name"] for r in rows]
    assert shown == ["'" + n for n in FORMULA_NAMES[:4]] + ["plain"]
    # the figures stay numbers (a negative number is not a name)
    assert all(float(r["ap"]) >= 0 for r in rows)


def test_report_markdown_shows_user_text_as_written() -> None:
    """A taxonomy, dataset or file name with Markdown's table separator, emphasis, link or
    HTML characters stays in its cell and is shown as written (escaped), not read as
    markup; the figures' own brackets are left alone."""
    from toxeval.report import report_markdown

    result = _result(("a", "b"), taxonomy_name="tax|<b>bold</b>*x*[l](u)")
    result.dataset["name"] = "data|set_v2*"
    md = report_markdown(result)
    summary = [line for line in md.splitlines() if line.startswith("| ")]
    # every summary row has exactly its two cells: no unescaped | inside a value
    for line in summary[
        : summary.index(
            "| category | AP | ROC AUC | F1 | support | negatives | unknown | no score | in mAP |"
        )
    ]:
        cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 2, line
    assert r"tax\|\<b\>bold\</b\>\*x\*\[l\](u)" in md
    assert r"data\|set\_v2\*" in md
    assert "<b>" not in md
    mp = next(line for line in summary if line.startswith("| mAP |"))
    assert re.search(r"\| \d\.\d{4}\s+\(macro AP", mp), mp
