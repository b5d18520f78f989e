"""Exact mergeable AP/ROC AUC states: the runs of one binary problem, and the
reducer that turns runs fed in descending score order into AP and ROC AUC.

A binary problem's *runs* are its distinct scores in descending order, each with the
summed weight of the positive and of the negative rows scored there (rows whose
label is unknown, i.e. masked, and rows of weight 0 are left out; the known
positives and negatives are counted, zero weights included, because ROC AUC's
single-class rule counts them). That is all scikit-learn's precision-recall and ROC
curves read, so:

* runs of disjoint rows merge into the runs of their union (:meth:`LabelRuns.merge`,
  a sorted merge; associative and commutative up to float addition order);
* AP and ROC AUC are one pass over the runs (:meth:`LabelRuns.figures`), equal to
  ``average_precision_score`` / ``roc_auc_score`` on the rows (ties, sample
  weights, masks) to about 1e-16 relative;
* the pass needs the runs only in descending order, piece by piece:
  :class:`RunsReducer` takes the runs of disjoint score ranges one range at a time,
  highest range first, with O(1) state (running true/false positive weights and the
  unnormalised AP and AUC sums, divided by the totals at the end). A caller who
  range-partitions a label too large for memory (boundaries chosen on
  :func:`score_keys`, so equal scores never straddle two ranges) builds each range's
  runs, feeds them in order, and never holds the label's N scores.

Scores are compared through order keys (``score_keys``): ``-0.0`` ties ``0.0``,
float32 scores are tied in float32. Runs therefore carry their score dtype family
(``"float64"``, ``"float32"``, ``"int64"`` or ``"uint64"``) and runs of different
families do not merge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics import BinaryFigures, check_mask, check_n_jobs, to_array, warn_binary_flags

__all__ = [
    "LabelRuns",
    "PairFigures",
    "RunsReducer",
    "binary_figures",
    "range_numbers",
    "score_keys",
]

SCORE_KINDS = ("float64", "float32", "int64", "uint64")

_EMPTY_KEYS = np.zeros(0, dtype=np.uint64)
_EMPTY_F = np.zeros(0, dtype=np.float64)


class PairFigures(NamedTuple):
    """AP and ROC AUC of one binary problem, with the flags saying why a value is
    undefined (0 when defined; :meth:`warn` emits scikit-learn's warnings/errors)."""

    ap: float
    roc_auc: float
    ap_flags: int
    roc_auc_flags: int

    def warn(self) -> None:
        """Emit the warnings (or raise the errors) ``average_precision_score`` and
        ``roc_auc_score`` give for this problem."""
        warn_binary_flags(self.ap_flags, self.roc_auc_flags)


def _kind_of(y_score: NDArray[Any]) -> tuple[str, NDArray[Any]]:
    """The score family of 1-D scores and the scores the kernels read."""
    dt = y_score.dtype
    if dt.kind not in "iuf" or dt.kind == "c":
        raise ValueError(f"y_score must be numeric; got dtype {dt}")
    if dt.kind == "u" and dt.itemsize == 8:
        return "uint64", (np.ascontiguousarray(y_score) ^ np.uint64(1 << 63)).view(np.int64)
    if dt in (np.float64, np.float32, np.int64):
        s = y_score
    else:
        s = y_score.astype(np.int64 if dt.kind in "iu" else np.float64)
    if s.dtype.kind == "f" and s.size and not np.isfinite(s).all():
        raise ValueError("Input y_score contains NaN or infinity.")
    return str(s.dtype), s


def score_keys(y_score: Any) -> NDArray[np.uint64]:
    """The order keys of 1-D scores, as runs hold them: ``a < b`` exactly when
    ``key(a) < key(b)``, and ``-0.0`` and ``0.0`` share a key; float32 scores are
    keyed in float32, other integers as int64, other floats as float64, uint64 in
    their own order. Use them to choose range boundaries (splitters) for
    :class:`RunsReducer`: a range ``lo <= key < hi`` never splits a tie."""
    arr = to_array(y_score)
    if arr.ndim != 1:
        raise ValueError(f"score_keys needs 1-D scores; got shape {arr.shape}")
    kind, s = _kind_of(arr)
    if kind == "uint64":
        keys: NDArray[np.uint64] = np.array(arr, dtype=np.uint64, copy=True)
        return keys
    return _core.score_keys(np.ascontiguousarray(s))


def range_numbers(y_score: Any, bounds: NDArray[np.uint64]) -> NDArray[np.uint32]:
    """The range number of each of 1-D scores given ascending order keys ``bounds``
    (from :func:`score_keys`): how many bounds are at most its key, i.e.
    ``np.searchsorted(bounds, score_keys(y_score), side="right")``, in one native
    pass without the keys (several times faster than that on random scores)."""
    arr = to_array(y_score)
    if arr.ndim != 1:
        raise ValueError(f"range_numbers needs 1-D scores; got shape {arr.shape}")
    kind, s = _kind_of(arr)
    # aligned as well as contiguous: Dask's out-of-band buffers can be misaligned
    b = np.require(bounds, dtype=np.uint64, requirements=("C", "A"))
    if kind == "uint64":
        out: NDArray[np.uint32] = np.searchsorted(b, arr, side="right").astype(np.uint32)
        return out
    return _core.range_numbers(np.require(s, requirements=("C", "A")), b)


class LabelRuns:
    """The runs of one binary problem (see the module docs).

    Attributes: ``keys`` (uint64, strictly descending order keys), ``pos`` and
    ``neg`` (float64 summed weights per key), ``n_pos`` and ``n_neg`` (known
    positive and negative rows, zero weights included), ``score_kind``. Build with
    :meth:`from_scores` (one label) or :meth:`from_matrix` (each column of a chunk);
    instances are not changed once built (every operation returns a new one).
    """

    __slots__ = ("keys", "n_neg", "n_pos", "neg", "pos", "score_kind")

    def __init__(
        self,
        keys: Any,
        pos: Any,
        neg: Any,
        *,
        n_pos: int,
        n_neg: int,
        score_kind: str,
    ) -> None:
        """Runs from arrays (checked: equal lengths, strictly descending keys,
        finite weights, non-negative counts, a known score kind)."""
        if score_kind not in SCORE_KINDS:
            raise ValueError(f"score_kind must be one of {SCORE_KINDS}; got {score_kind!r}")
        # Aligned as well as contiguous: arrays unpickled from a network frame
        # (Dask's out-of-band buffers) can be misaligned, which the kernels refuse.
        k = np.require(keys, dtype=np.uint64, requirements=("C", "A"))
        p = np.require(pos, dtype=np.float64, requirements=("C", "A"))
        q = np.require(neg, dtype=np.float64, requirements=("C", "A"))
        if k.ndim != 1 or p.shape != k.shape or q.shape != k.shape:
            raise ValueError("runs need 1-D keys, pos and neg of one length")
        if k.size > 1 and not bool(np.all(k[:-1] > k[1:])):
            raise ValueError(
                "run keys must be strictly descending (distinct scores, highest first)"
            )
        if not (np.isfinite(p).all() and np.isfinite(q).all()):
            raise ValueError("run weights must be finite")
        if int(n_pos) < 0 or int(n_neg) < 0:
            raise ValueError("n_pos and n_neg must be non-negative")
        self.keys, self.pos, self.neg = k, p, q
        self.n_pos, self.n_neg = int(n_pos), int(n_neg)
        self.score_kind = score_kind

    @classmethod
    def _trusted(cls, arrays: tuple[Any, Any, Any], n_pos: int, n_neg: int, kind: str) -> LabelRuns:
        """Runs from kernel output (already in canonical form)."""
        r = cls.__new__(cls)
        r.keys, r.pos, r.neg = arrays
        r.n_pos, r.n_neg, r.score_kind = int(n_pos), int(n_neg), kind
        return r

    @classmethod
    def empty(cls, score_kind: str = "float64") -> LabelRuns:
        """Runs of no rows."""
        return cls(_EMPTY_KEYS, _EMPTY_F, _EMPTY_F, n_pos=0, n_neg=0, score_kind=score_kind)

    @classmethod
    def from_matrix(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        mask: Any = None,
        sample_weight: Any = None,
        n_jobs: int | None = None,
    ) -> list[LabelRuns]:
        """The runs of every column of a chunk: ``y_true`` 0/1 (or bool) and
        ``y_score`` of shape (n, k), ``mask`` (True = known) of the same shape,
        ``sample_weight`` of shape (n,). One native call; labels in parallel."""
        n_jobs = check_n_jobs(n_jobs, "LabelRuns.from_matrix")
        s, kind, y, m, w = cls.check_matrix(y_true, y_score, mask=mask, sample_weight=sample_weight)
        return cls.from_checked(s, kind, y, m, w, n_jobs)

    @staticmethod
    def check_matrix(
        y_true: Any, y_score: Any, *, mask: Any = None, sample_weight: Any = None
    ) -> tuple[NDArray[Any], str, NDArray[np.bool_], NDArray[np.bool_] | None, Any]:
        """The checks of :meth:`from_matrix` (its errors), without building runs: the
        kernel arrays (scores contiguous, score kind, bool labels, mask, float64
        weights or None) for :meth:`from_checked`."""
        y = to_array(y_true)
        raw = to_array(y_score)
        if y.ndim != 2 or raw.shape != y.shape:
            raise ValueError(
                f"y_true and y_score must be 2-D of one shape; got {y.shape} and {raw.shape}"
            )
        if y.dtype != np.bool_:
            if y.dtype.kind not in "iuf" or (y.size and not np.isin(y, (0, 1)).all()):
                raise ValueError("y_true must be 0/1 or bool indicators")
            y = y == 1
        kind, s = _kind_of(raw)
        m = check_mask(mask, y.shape)
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(to_array(sample_weight), dtype=np.float64)
            if w.shape != (y.shape[0],):
                raise ValueError(f"sample_weight must have shape {(y.shape[0],)}; got {w.shape}")
            if not np.isfinite(w).all():
                raise ValueError("Input sample_weight contains NaN or infinity.")
        return np.ascontiguousarray(s), kind, y, m, w

    @classmethod
    def from_checked(
        cls,
        s: NDArray[Any],
        score_kind: str,
        y_pos: NDArray[Any],
        mask: NDArray[np.bool_] | None,
        weight: NDArray[np.float64] | None,
        n_jobs: int | None,
    ) -> list[LabelRuns]:
        """The runs of every column of checked kernel arrays: ``s`` (float64,
        float32 or int64; uint64 shifted into int64) of shape (n, k), ``y_pos`` bool
        (n, k) or packed bits (``np.packbits(y, axis=1, bitorder="little")``),
        ``mask`` bool (n, k) or None, ``weight`` float64 (n,) or None. For callers
        that checked their input already (``toxeval.metrics.check_report_chunk``)."""
        parts, n_pos, n_neg = _core.runs_build(s, y_pos, weight, mask, n_jobs)
        return [
            cls._trusted(p, a, b, score_kind) for p, a, b in zip(parts, n_pos, n_neg, strict=True)
        ]

    @classmethod
    def from_scores(
        cls, y_true: Any, y_score: Any, *, mask: Any = None, sample_weight: Any = None
    ) -> LabelRuns:
        """The runs of one label: 1-D ``y_true`` (0/1 or bool), ``y_score``,
        optional ``mask`` (True = known) and ``sample_weight``."""
        y, s = to_array(y_true), to_array(y_score)
        if y.ndim != 1 or s.shape != y.shape:
            raise ValueError(
                f"y_true and y_score must be 1-D of one length; got {y.shape} and {s.shape}"
            )
        m = None if mask is None else np.asarray(to_array(mask)).reshape(-1, 1)
        return cls.from_matrix(
            y.reshape(-1, 1), s.reshape(-1, 1), mask=m, sample_weight=sample_weight, n_jobs=1
        )[0]

    def __len__(self) -> int:
        """Number of distinct scores."""
        return int(self.keys.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held by the three arrays."""
        return int(self.keys.nbytes + self.pos.nbytes + self.neg.nbytes)

    def __repr__(self) -> str:
        return (
            f"LabelRuns({len(self)} distinct {self.score_kind} scores, "
            f"n_pos={self.n_pos}, n_neg={self.n_neg})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelRuns):
            return NotImplemented
        return (
            self.score_kind == other.score_kind
            and (self.n_pos, self.n_neg) == (other.n_pos, other.n_neg)
            and np.array_equal(self.keys, other.keys)
            and np.array_equal(self.pos, other.pos)
            and np.array_equal(self.neg, other.neg)
        )

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        checked = LabelRuns(
            state["keys"],
            state["pos"],
            state["neg"],
            n_pos=state["n_pos"],
            n_neg=state["n_neg"],
            score_kind=state["score_kind"],
        )
        for name in self.__slots__:
            object.__setattr__(self, name, getattr(checked, name))

    def merge(self, *others: LabelRuns) -> LabelRuns:
        """The runs of the union of these rows and ``others``' (new object)."""
        return LabelRuns.merge_all((self, *others))

    @staticmethod
    def merge_all(runs: Iterable[LabelRuns]) -> LabelRuns:
        """Merge any number of runs (a balanced tree of sorted merges)."""
        items = list(runs)
        if not items:
            raise ValueError("merge_all needs at least one LabelRuns")
        kinds = {r.score_kind for r in items}
        if len(kinds) > 1:
            raise ValueError(f"cannot merge runs of different score dtypes: {sorted(kinds)}")
        if len(items) == 1:
            return items[0]
        arrays = _core.runs_merge([(r.keys, r.pos, r.neg) for r in items])
        n_pos = sum(r.n_pos for r in items)
        n_neg = sum(r.n_neg for r in items)
        return LabelRuns._trusted(arrays, n_pos, n_neg, items[0].score_kind)

    def figures(self, *, warn: bool = False) -> PairFigures:
        """AP and ROC AUC of these rows (``average_precision_score`` /
        ``roc_auc_score`` values; NaN and flags where they are undefined). With
        ``warn=True`` scikit-learn's warnings are emitted (and its errors raised)."""
        red = RunsReducer()
        red.feed(self)
        return red.result(warn=warn)


class RunsReducer:
    """AP and ROC AUC from runs fed in descending score order, in pieces.

    ``feed`` the runs of disjoint score ranges highest range first (each piece's
    keys at most the last key fed; a score fed in two consecutive pieces is one
    threshold); ``result()`` gives the AP and ROC AUC of all rows fed, equal to
    scikit-learn's on them. The state is a few numbers (pickles as a tuple), so a
    reducer can move between processes between ranges. The known positive and
    negative counts add up from the runs fed.
    """

    def __init__(self) -> None:
        """A reducer that has seen nothing."""
        self._state: Any = _core.runs_reducer_new()
        self.n_pos = 0
        self.n_neg = 0
        self.score_kind: str | None = None

    def feed(self, runs: LabelRuns) -> RunsReducer:
        """Consume the next piece (returns self). ``ValueError`` when a key is higher
        than one fed before, or the score dtype differs."""
        if self.score_kind is not None and runs.score_kind != self.score_kind:
            raise ValueError(
                f"cannot feed {runs.score_kind} runs to a reducer of {self.score_kind} runs"
            )
        self._state = _core.runs_reducer_feed(self._state, (runs.keys, runs.pos, runs.neg))
        self.score_kind = runs.score_kind
        self.n_pos += runs.n_pos
        self.n_neg += runs.n_neg
        return self

    @classmethod
    def below(cls, pos_weight: float, neg_weight: float) -> RunsReducer:
        """A reducer for one range of scores below ranges holding ``pos_weight``
        positive and ``neg_weight`` negative weight: fed that range's runs, it holds
        the range's share of the figures, so ranges can be reduced apart (in
        parallel) once the totals above each are known, and joined with
        :meth:`then`, highest range first."""
        out = cls()
        out._state = _core.runs_reducer_below(float(pos_weight), float(neg_weight))
        return out

    def then(self, lower: RunsReducer) -> RunsReducer:
        """Join the reducer of the next lower range (made by :meth:`below` with the
        weights fed here so far, no score shared with them): as if its runs had been
        fed here (returns self)."""
        kinds = {k for k in (self.score_kind, lower.score_kind) if k is not None}
        if len(kinds) > 1:
            raise ValueError(f"cannot join reducers of different score dtypes: {sorted(kinds)}")
        self._state = _core.runs_reducer_then(self._state, lower._state)
        self.score_kind = self.score_kind or lower.score_kind
        self.n_pos += lower.n_pos
        self.n_neg += lower.n_neg
        return self

    def result(self, *, warn: bool = False) -> PairFigures:
        """AP and ROC AUC of everything fed so far (the reducer can go on)."""
        ap, auc, apf, aucf = _core.runs_reducer_finish(self._state, self.n_pos, self.n_neg)
        out = PairFigures(float(ap), float(auc), int(apf), int(aucf))
        if warn:
            out.warn()
        return out

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def binary_figures(per_label: Sequence[PairFigures], micro: PairFigures | None) -> BinaryFigures:
    """The per-label (and micro) figures of reducers or runs in the form
    ``MultilabelAccumulator.compute(binary=...)`` takes; without ``micro`` the
    micro-averaged AP and ROC AUC are NaN, unflagged (not computed)."""
    return BinaryFigures(
        np.array([f.ap for f in per_label], dtype=np.float64),
        np.array([f.roc_auc for f in per_label], dtype=np.float64),
        np.array([f.ap_flags for f in per_label], dtype=np.uint8),
        np.array([f.roc_auc_flags for f in per_label], dtype=np.uint8),
        math.nan if micro is None else micro.ap,
        math.nan if micro is None else micro.roc_auc,
        0 if micro is None else micro.ap_flags,
        0 if micro is None else micro.roc_auc_flags,
    )
