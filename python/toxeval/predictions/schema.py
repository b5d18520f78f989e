"""What a prediction dump becomes: :class:`Predictions` (an (N, K) score matrix in a
dataset's row order, which rows are scored, and the counts of everything that was not),
:class:`PredictionError`, the accepted formats and policies, and the column names a dump
may use for ids, scores, labels, raw text and request errors.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from toxeval.ids import SHOW
from toxeval.parsing import UnparseableOutputError
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    pass


Format = Literal["auto", "jsonl", "csv", "parquet", "npy", "npz"]


OnMismatch = Literal["error", "drop"]


ParsePolicy = Literal["zeros", "exclude", "error"]


Kind = Literal["scores", "labels", "text"]


FORMATS: tuple[str, ...] = ("auto", "jsonl", "csv", "parquet", "npy", "npz")


MISMATCH_POLICIES: tuple[str, ...] = ("error", "drop")


PARSE_POLICIES: tuple[str, ...] = ("zeros", "exclude", "error")


STATUSES: tuple[str, ...] = ("ok", "partial", "empty", "unparseable")


# How many ids an error message or the report lists before "...".
ID_COLUMNS = ("id",)


SCORE_COLUMNS = ("scores", "score", "y_score", "probs", "probabilities")


LABEL_COLUMNS = ("labels", "label", "categories", "y_pred")


TEXT_COLUMNS = ("output", "text", "response", "completion", "generation")


# A failed model request: any value but null, "" or false marks the row as failed.
ERROR_COLUMN = "error"


# Columns that are never category scores (pandas index columns and the like).
IGNORED_COLUMNS = re.compile(r"^(index|row|__index_level_\d+__|Unnamed: ?\d*|)$")


class PredictionError(ValueError):
    """A prediction dump is unreadable, malformed, or does not match the dataset."""


class UnparseableOutputs(PredictionError, UnparseableOutputError):
    """Raw outputs that do not parse under ``parse_policy="error"``: a
    :class:`PredictionError` like every other bad prediction, and the
    :class:`~toxeval.parsing.UnparseableOutputError` that ``ParsedBatch.apply_policy``
    raises for the same policy, so either ``except`` catches it."""


def check_choice(name: str, value: object, choices: tuple[str, ...], flag: str) -> None:
    """A ValueError naming the keyword (and its CLI flag) unless ``value`` is a choice."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, choices))} ({flag}), got {value!r}"
        )


@dataclass(frozen=True)
class Predictions:
    """Predictions aligned to a dataset's rows.

    ``scores[i]`` is the score vector of dataset row ``i`` (columns in taxonomy order);
    rows with ``scored[i] == False`` (no prediction, a null prediction, a failed request,
    or excluded by the parse policy) hold zeros and are left out of every figure.
    """

    scores: np.ndarray  # (N, K) float64
    scored: np.ndarray  # (N,) bool
    kind: Kind
    source: str
    format: str
    sha256: str | None
    n_read: int
    on_mismatch: str
    n_missing: int = 0
    n_duplicate: int = 0
    n_unknown: int = 0
    missing_ids: tuple[str, ...] = ()
    duplicate_ids: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    n_out_of_range: int = 0
    parse_policy: str | None = None
    parse_counts: dict[str, int] | None = None
    n_parse_excluded: int = 0
    graded: bool = True
    notes: tuple[str, ...] = field(default=())
    # sha256 of the dataset the rows were aligned to (None: not recorded); scoring
    # checks it against the dataset it is given
    dataset_sha256: str | None = None
    # dataset rows whose prediction is null (unknown: no score, label list or output)
    # or whose request failed (a non-null 'error' field): unscored, never negatives
    n_null: int = 0
    null_ids: tuple[str, ...] = ()
    n_failed: int = 0
    failed: tuple[tuple[str, str], ...] = ()  # first few (id, error)
    # (N, K) bool, dataset row order: cells the prediction cannot speak to (a Llama Guard
    # verdict says nothing about a category no code of its mapping reaches), masked as
    # unknown labels when scored; None: every cell of a scored row is a prediction
    unknown_cells: np.ndarray | None = None

    @property
    def n_scored(self) -> int:
        return int(self.scored.sum())

    def summary(self) -> dict[str, Any]:
        """JSON-ready description (everything but the score matrix)."""
        return {
            "source": self.source,
            "format": self.format,
            "kind": self.kind,
            "sha256": self.sha256,
            "rows_read": self.n_read,
            "on_mismatch": self.on_mismatch,
            "missing": {"count": self.n_missing, "first_ids": list(self.missing_ids)},
            "duplicate": {"count": self.n_duplicate, "first_ids": list(self.duplicate_ids)},
            "unknown": {"count": self.n_unknown, "first_ids": list(self.unknown_ids)},
            "scores_outside_0_1": self.n_out_of_range,
            "parse_policy": self.parse_policy,
            "parse_status_counts": self.parse_counts,
            "parse_excluded": self.n_parse_excluded,
            "null": {"count": self.n_null, "first_ids": list(self.null_ids)},
            "failed": {
                "count": self.n_failed,
                "first": [{"id": i, "error": e} for i, e in self.failed],
            },
        }


def ids_text(ids: Sequence[str], total: int | None = None) -> str:
    shown = ", ".join(repr(i) for i in ids[:SHOW])
    n = len(ids) if total is None else total
    return shown + (", ..." if n > SHOW else "")


def resolve_category(name: str, taxonomy: Taxonomy) -> str | None:
    if name in taxonomy.ids:
        return name
    return taxonomy.resolve(name)
