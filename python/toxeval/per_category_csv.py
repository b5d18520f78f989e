"""``per_category.csv``: one row per category of a report (AP with its interval, ROC AUC,
F1, counts, why AP is undefined or its interval withheld, calibration against
annotators), written by :func:`toxeval.report.write_report_files`."""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING

from toxeval.calibration import FIGURES as CALIBRATION_FIGURES
from toxeval.calibration import csv_values

if TYPE_CHECKING:
    from toxeval.scoring.result import EvaluationResult

__all__ = ["CSV_COLUMNS", "per_category_csv"]

#: The columns, in order (the calibration columns are empty without per-annotator labels)
CSV_COLUMNS = (
    "id",
    "name",
    "ap",
    "ap_ci_low",
    "ap_ci_high",
    "roc_auc",
    "f1",
    "support",
    "negatives",
    "unknown",
    "no_score",
    "in_map",
    "ap_undefined_reason",
    "ap_ci_undefined",
    "ap_ci_withheld",
    *CALIBRATION_FIGURES,  # empty without per-annotator labels
)


def per_category_csv(result: EvaluationResult) -> str:
    """``per_category.csv``; a name a spreadsheet would run as a formula (``=``, ``+``,
    ``-``, ``@``, ...) gets a leading ``'`` (:func:`toxeval.compare_markup.csv_cell`)."""
    from toxeval.compare_markup import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in result.per_category:
        ci = r.get("ap_ci") or (None, None)
        # (a result scored without add_intervals has no ap_ci_undefined, ap_ci_withheld)
        row = {
            "ap_ci_undefined": None,
            "ap_ci_withheld": None,
            **r,
            "ap_ci_low": ci[0],
            "ap_ci_high": ci[1],
            **csv_values(result.calibration, r["id"]),
        }
        w.writerow(
            [
                ""
                if row[c] is None or (isinstance(row[c], float) and not math.isfinite(row[c]))
                else csv_cell(row[c])
                for c in CSV_COLUMNS
            ]
        )
    return buf.getvalue()
