"""Names of the drop-in metrics that several test modules run over."""

from __future__ import annotations

# The label-ranking family: 2-D y_true and y_score, one value over the rows.
RANKING = [
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "dcg_score",
    "ndcg_score",
]

# Every metric with one value per row, averaged over the rows: the family and one_error.
PER_ROW = [*RANKING, "one_error"]
