"""What an evaluation returns: :class:`EvaluationResult` (every figure, what was evaluated
and how, and the scored rows' arrays in :class:`ScoredRowArrays`), and the version of the
``results.json`` schema it writes (:data:`SCHEMA_VERSION`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    pass


SCHEMA_VERSION = "2"


Progress = Callable[[str], None]


def toxeval_version() -> str:
    """The installed toxeval's version (of its native module), as results record it."""
    from toxeval._core import __version__

    return str(__version__)


@dataclass(frozen=True)
class ScoredRowArrays:
    """The rows an evaluation scored: ``y_true`` (N, K) with unknown cells 0, ``scores``
    (N, K) and ``mask`` (N, K, True where the label is known), and :attr:`ids`, their
    dataset ids. The arrays may be views of the dataset's and the predictions' own:
    read them, do not write to them. The ids are gathered only when asked for (writing
    ``scored_rows.parquet``), so scoring pays nothing for them."""

    y_true: np.ndarray
    scores: np.ndarray
    mask: np.ndarray
    dataset_ids: Any  # every dataset id: a sequence of str or a StringColumn
    scored: np.ndarray  # (n_dataset_rows,) bool: the rows above, in order
    # the rows' annotator shares (N, K) and annotator counts (N,), when the dataset has
    # per-annotator labels (for the intervals that resample annotators)
    soft: np.ndarray | None = None
    n_annotators: np.ndarray | None = None

    @functools.cached_property
    def ids(self) -> Any:
        """The scored rows' ids as a pyarrow string array."""
        import pyarrow as pa

        arrow = getattr(self.dataset_ids, "arrow", None)
        arr = arrow if isinstance(arrow, (pa.Array, pa.ChunkedArray)) else None
        if arr is None:
            arr = pa.array([str(i) for i in self.dataset_ids], type=pa.string())
        return arr if bool(self.scored.all()) else arr.filter(pa.array(self.scored))


@dataclass
class EvaluationResult:
    """Every figure of one evaluation, plus what was evaluated and how.

    ``to_dict()`` holds what ``results.json`` holds (see docs/cli.md for the schema),
    with NaN kept as float NaN: ``toxeval.report.results_json`` writes it as JSON, NaN
    as ``null``.
    """

    config: dict[str, Any]
    dataset: dict[str, Any]
    system: dict[str, Any]
    counts: dict[str, Any]
    figures: dict[str, Any]
    per_category: list[dict[str, Any]]
    excluded_categories: list[str]
    card_recipe: dict[str, Any]
    agreement: dict[str, Any] | None
    parse: dict[str, Any] | None
    binary_scores: bool
    notes: list[str] = field(default_factory=list)
    # the files read, each as {path (as given), name, sha256} or {builtin, sha256}
    inputs: dict[str, Any] = field(default_factory=dict)
    # --operating-point / --thresholds-from: per-category thresholds and the rates there
    # (toxeval.operating_points.section); in results.json only when asked for
    operating_points: dict[str, Any] | None = None
    # a run file's latency, retries and token usage, priced with --prices when given
    # (toxeval.llm.run_costs.cost_block); in results.json only for a run file
    cost: dict[str, Any] | None = None
    # --slice-by: the headline figures per value of dataset columns (toxeval.slices);
    # in results.json only when asked for
    slices: dict[str, Any] | None = None
    # ECE and Brier score against the annotators' share and majority label, with the
    # reliability bins (toxeval.calibration); in results.json only when the dataset has
    # per-annotator labels
    calibration: dict[str, Any] | None = None
    # the rows the figures were computed on (not in results.json; written beside it as
    # scored_rows.parquet, and read by the HTML report and `toxeval compare`)
    rows: ScoredRowArrays | None = field(default=None, repr=False, compare=False)

    @property
    def map(self) -> float:
        return float(self.figures["map"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "toxeval_version": toxeval_version(),
            "config": self.config,
            "dataset": self.dataset,
            "system": self.system,
            "counts": self.counts,
            "figures": self.figures,
            "per_category": self.per_category,
            "excluded_categories": self.excluded_categories,
            "card_recipe": self.card_recipe,
            "agreement": self.agreement,
            "parse": self.parse,
            "binary_scores": self.binary_scores,
            "notes": self.notes,
            "inputs": self.inputs,
            **({"operating_points": self.operating_points} if self.operating_points else {}),
            **({"cost": self.cost} if self.cost is not None else {}),
            **({"slices": self.slices} if self.slices else {}),
            **({"calibration": self.calibration} if self.calibration is not None else {}),
        }

    def input_paths(self) -> list[str]:
        """The paths of the files this result was computed from (as given)."""
        return [r["path"] for r in self.inputs.values() if isinstance(r, dict) and "path" in r]
