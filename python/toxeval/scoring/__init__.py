"""Scoring: every figure of a toxeval report, from a dataset and aligned predictions.

Headline figures are the standard rank-based definitions with scikit-learn semantics,
computed by :mod:`toxeval.metrics` with ``mask=dataset.mask`` so that unknown labels are
never negatives:

* **mAP** (primary): macro average precision over the categories with at least one known
  positive among the scored rows; the other categories are listed and excluded (AP of a
  category without positives is undefined; scikit-learn would count it as 0).
* **label ranking loss**, **LRAP**, **coverage error**, **one-error**: per row over the
  known labels of that row; rows with no known label are left out of these means and
  counted (``counts["rows_without_known_labels"]``).
* at a threshold (default 0.5, ``score >= threshold`` is a positive): **micro F1**,
  **macro F1** (over the same categories as mAP) and **Hamming loss**, all over known
  cells only.
* a per-category table: AP, ROC AUC (NaN where the known labels have one class only),
  F1, support (known positives), known negatives and unknown count.

Beside them, the benchmark card's reference recipe (:mod:`toxeval.card_recipe`) on the
predictions thresholded at ``threshold``, restricted to rows whose labels are all known,
labelled as the card's recipe with its caveats.

The parts, each a module of this package: :mod:`~toxeval.scoring.result` (the
:class:`EvaluationResult`), :mod:`~toxeval.scoring.figures` (:func:`score_predictions`),
:mod:`~toxeval.scoring.agreement` (annotator disagreement), :mod:`~toxeval.scoring.card`
(the benchmark card's recipe), :mod:`~toxeval.scoring.intervals` (bootstrap intervals
of mAP, label ranking loss and per-category AP, shared with ``toxeval compare``) and
:mod:`~toxeval.scoring.api` (:func:`score` and :func:`evaluate`, which add the intervals).
"""

from __future__ import annotations

from toxeval.scoring.api import evaluate as evaluate
from toxeval.scoring.api import score as score
from toxeval.scoring.card import CARD_CAVEATS as CARD_CAVEATS
from toxeval.scoring.figures import score_predictions as score_predictions
from toxeval.scoring.intervals import add_intervals as add_intervals
from toxeval.scoring.result import SCHEMA_VERSION as SCHEMA_VERSION
from toxeval.scoring.result import EvaluationResult as EvaluationResult
from toxeval.scoring.result import Progress as Progress
from toxeval.scoring.result import ScoredRowArrays as ScoredRowArrays

__all__ = [
    "SCHEMA_VERSION",
    "EvaluationResult",
    "add_intervals",
    "evaluate",
    "score",
    "score_predictions",
]
