"""The outcome of parsing: a :class:`ParseResult` per output, a :class:`ParsedBatch` for
many, their statuses, and the unparseable-row policies of :meth:`ParsedBatch.apply_policy`
(what each status means is in the :mod:`toxeval.parsing` overview)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from toxeval.taxonomy import Taxonomy

Status = Literal["ok", "partial", "empty", "unparseable"]
Policy = Literal["zeros", "exclude", "error"]
# What an explicit null value (``{"hate": null}``, ``hate: null``) does: "unparseable"
# (the default) makes the row unparseable, as any value that is not understood; "omit"
# reads the category as if the answer had left it out, for a caller that marks left-out
# categories unknown itself (toxeval.llm's JSON scoring).
NullPolicy = Literal["unparseable", "omit"]
NULL_POLICIES: tuple[NullPolicy, ...] = ("unparseable", "omit")
STATUSES: tuple[Status, ...] = ("ok", "partial", "empty", "unparseable")
POLICIES: tuple[Policy, ...] = ("zeros", "exclude", "error")
DEFAULT_THRESHOLD = 0.5


class UnparseableOutputError(ValueError):
    """Raised by :meth:`ParsedBatch.apply_policy` with ``policy="error"``."""


@dataclass(frozen=True)
class ParseResult:
    """One output turned into a label vector.

    ``scores`` is a read-only (K,) float64 array in taxonomy column order: the given
    scores for graded outputs, else 1.0 for each label and 0.0 for each negative (all
    zero for ``empty`` and ``unparseable``), and NaN for each category the answer says
    nothing about (a ``partial`` row: unknown, never a negative; see :attr:`known`).
    ``labels`` are the ids with score ``>= threshold``.
    """

    status: Status
    labels: frozenset[str]
    scores: np.ndarray
    unknown: tuple[str, ...]
    reason: str | None
    graded: bool

    @property
    def known(self) -> np.ndarray:
        """(K,) bool: the categories the answer gives a value for (False where
        ``scores`` is NaN). Score only these; the others are unknown, never 0."""
        return np.asarray(~np.isnan(self.scores), dtype=bool)


@dataclass(frozen=True, eq=False)
class ParsedBatch:
    """Many outputs parsed at once; row ``i`` of every field belongs to ``texts[i]``.

    ``graded`` is True when at least one row carried real-valued scores; when it is
    False every score is 0 or 1 and ranking metrics see massive ties (docs/parsing.md).
    """

    taxonomy: Taxonomy
    scores: np.ndarray  # (N, K) float64
    statuses: np.ndarray  # (N,) str
    labels: list[frozenset[str]]
    unknown: list[tuple[str, ...]]
    reasons: list[str | None]
    graded: bool
    graded_rows: np.ndarray | None = field(default=None, repr=False)  # (N,) bool

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> ParseResult:
        row = self.scores[i].copy()
        row.flags.writeable = False
        return ParseResult(
            status=str(self.statuses[i]),  # type: ignore[arg-type]
            labels=self.labels[i],
            scores=row,
            unknown=self.unknown[i],
            reason=self.reasons[i],
            graded=bool(self.graded_rows[i]) if self.graded_rows is not None else self.graded,
        )

    @property
    def known(self) -> np.ndarray:
        """(N, K) bool: the cells an answer gives a value for; ``scores`` is NaN
        elsewhere (a category the answer says nothing about is unknown, never 0)."""
        return np.asarray(~np.isnan(self.scores), dtype=bool)

    @property
    def is_binary(self) -> bool:
        """True when every known score is exactly 0.0 or 1.0 (heavy ties for ranking
        metrics)."""
        s = self.scores
        return bool(np.all((s == 0.0) | (s == 1.0) | np.isnan(s)))

    def status_counts(self) -> dict[str, int]:
        """Rows per status, every status present (zero counts included), in STATUSES order."""
        values, counts = np.unique(self.statuses, return_counts=True)
        found = {str(v): int(c) for v, c in zip(values, counts, strict=True)}
        return {s: found.get(s, 0) for s in STATUSES}

    def apply_policy(self, policy: Policy = "exclude") -> tuple[np.ndarray, np.ndarray]:
        """Scores and the rows to score under the unparseable-row policy.

        Returns ``(scores, keep)`` with ``keep`` a (N,) bool array. ``exclude`` (the
        default): unparseable rows are dropped (``keep`` False; report
        ``status_counts()["unparseable"]``), since an answer that could not be read is
        not a "no". ``zeros``: every row is kept, unparseable rows score all-zero (an
        explicit choice; say so wherever the figures are reported). ``error``:
        raises :class:`UnparseableOutputError` if any row is unparseable. ``partial`` rows
        are always kept with the categories that are known; their unknown categories stay
        NaN in ``scores`` (see :attr:`known`): mask them, never read them as 0.
        """
        if policy not in POLICIES:
            raise ValueError(
                f"unknown unparseable-row policy {policy!r}; expected one of {', '.join(POLICIES)}"
            )
        bad = self.statuses == "unparseable"
        if policy == "zeros":
            return self.scores, np.ones(len(self), dtype=bool)
        if policy == "exclude":
            return self.scores, ~bad
        n_bad = int(bad.sum())
        if n_bad:
            rows = np.flatnonzero(bad)[:3]
            examples = "; ".join(f"row {int(r)}: {self.reasons[int(r)]}" for r in rows)
            raise UnparseableOutputError(
                f"{n_bad} of {len(self)} outputs are unparseable (policy 'error'): {examples}"
            )
        return self.scores, np.ones(len(self), dtype=bool)
