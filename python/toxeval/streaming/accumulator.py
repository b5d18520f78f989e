"""``MultilabelAccumulator``: ``multilabel_report`` over rows that arrive in
chunks (a training or evaluation loop, a stream of shards), with states that merge
across processes.

The state is the report's additive totals (``toxeval.metrics.ReportTotals``: per-row
sums, counts, thresholded counts) and, per label, the runs of distinct scores
(``LabelRuns``) that give the exact AP and ROC AUC. Sorting every small chunk on its
own and merging growing runs 1,000 times would be quadratic, so chunks are kept raw
(checked, copied, labels packed eight per byte) until the raw buffer takes as many
bytes as the runs do (at least 16 MiB), and then sorted in one native call and merged
into the runs: a log-structured merge, each cell sorted once and merged a few times
at most. When a sort gives runs larger than the raw cells it read (continuous scores:
about one run per cell, 24 bytes, against about 4-9 bytes a raw cell) the buffer is
the smaller form, and the rest is sorted once, at ``compute()``; for LLM confidences
or quantised scores the runs are tiny and the buffer is folded into them every
16 MiB. ``compute()``, ``merge()`` of states and pickling flush the
buffer first; results never depend on when that happens.

Why a Python class over plain NumPy arrays rather than a PyO3 class: the state is
arrays (totals and runs), so pickling, saving to NPZ and moving between processes is
NumPy's own, the native module stays stateless (every kernel takes arrays and returns
arrays), and the out-of-core path can spill and reload runs without the binding.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics import (
    BinaryFigures,
    MultilabelReport,
    ReportChunk,
    ReportTotals,
    check_n_jobs,
    check_report_chunk,
    finish_report,
)
from toxeval.streaming.runs import LabelRuns
from toxeval.streaming.state_arrays import runs_of_arrays, threshold_of
from toxeval.streaming.state_lock import locked, track

__all__ = ["MultilabelAccumulator"]

FORMAT = "toxeval.MultilabelAccumulator"
VERSION = 1
# Raw bytes buffered before the first sort (then: as many as the runs hold).
FLUSH_MIN_BYTES = 16 << 20
# Sorted parts per label (from merges) kept before they are merged into one.
MAX_PARTS = 16


class _Raw(NamedTuple):
    """A buffered chunk: own copies, labels packed (``np.packbits(..., axis=1,
    bitorder="little")``)."""

    s: NDArray[Any]
    bits: NDArray[np.uint8]
    mask: NDArray[np.bool_] | None
    weight: NDArray[np.float64] | None

    @property
    def nbytes(self) -> int:
        extra = sum(a.nbytes for a in (self.mask, self.weight) if a is not None)
        return int(self.s.nbytes + self.bits.nbytes + extra)


def as_host_array(x: Any) -> Any:
    """An array-like NumPy can read: NumPy arrays and objects with ``__array__`` as
    they are; an object with only ``__dlpack__`` (a CPU tensor of a framework that
    does not offer ``__array__``) through ``np.from_dlpack``. No framework is
    imported. Anything else is returned as is for the validation layer to judge."""
    if isinstance(x, np.ndarray) or hasattr(x, "__array__") or not hasattr(x, "__dlpack__"):
        return x
    try:
        return np.from_dlpack(x)
    except (TypeError, ValueError, BufferError, RuntimeError) as e:
        raise ValueError(f"cannot read a {type(x).__name__} through DLPack: {e}") from None


def _compact(a: NDArray[np.float64]) -> NDArray[Any]:
    """Weights stored in the narrowest type that holds them exactly (unweighted runs
    hold small whole numbers)."""
    if a.size == 0:
        return a.astype(np.uint8)
    for dt in (np.uint8, np.uint32):
        if a.min() >= 0 and a.max() <= np.iinfo(dt).max:
            c = a.astype(dt)
            if np.array_equal(c, a):
                return c
    return a


class MultilabelAccumulator:
    """``multilabel_report`` over chunks of rows, mergeable across processes.

    Parameters
    ----------
    n_labels : int, optional
        Number of labels; taken from the first update when None. Every update must
        have this many columns.
    threshold : float, default 0.5
        A label is predicted when ``y_score >= threshold`` (as ``multilabel_report``).
    n_jobs : int, optional
        Threads for the native passes (None = all cores); results do not depend on it.
    keep_runs : bool, default True
        Keep the runs that give AP and ROC AUC. ``False`` keeps only the additive
        totals (O(labels) state); then ``compute`` needs the AP/ROC AUC figures from
        elsewhere (e.g. range-partitioned runs fed to a ``RunsReducer``).

    ``compute()`` equals ``multilabel_report`` on the concatenation of every chunk
    (counts exactly, floats to ~1e-12 relative), whatever the chunks and merges;
    rows of an update without ``sample_weight`` weigh 1. Every chunk's scores must
    be of one dtype family (float64, float32, int64 for any other integers, uint64).
    One accumulator can be updated from several threads: changes are serialised.
    """

    _lock: Any  # a threading.RLock (toxeval.streaming.state_lock.track)

    def __init__(
        self,
        n_labels: int | None = None,
        *,
        threshold: float = 0.5,
        n_jobs: int | None = None,
        keep_runs: bool = True,
    ) -> None:
        """An empty accumulator (see the class docs)."""
        if n_labels is not None and (
            isinstance(n_labels, bool) or not isinstance(n_labels, (int, np.integer))
        ):
            raise TypeError(f"n_labels must be an int or None; got {n_labels!r}")
        if n_labels is not None and n_labels < 2:
            raise ValueError(f"multilabel_report needs at least 2 labels; got n_labels={n_labels}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
            raise TypeError(f"threshold must be a number; got {threshold!r}")
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number; got {threshold!r}")
        self._n_labels_arg = None if n_labels is None else int(n_labels)
        self.threshold = threshold
        self.n_jobs = check_n_jobs(n_jobs, "MultilabelAccumulator")
        self.keep_runs = bool(keep_runs)
        track(self)
        self.reset()

    # ------------------------------------------------------------------ state

    @locked
    def reset(self) -> None:
        """Forget every row (the settings stay)."""
        self.n_labels: int | None = self._n_labels_arg
        self.score_kind: str | None = None
        self._totals: ReportTotals | None = None
        self._parts: list[list[LabelRuns]] = []
        self._raw: list[_Raw] = []
        self._raw_bytes = 0
        self._runs_grow = False

    @property
    def n_samples(self) -> int:
        """Rows seen (masked and all-unknown rows included)."""
        return 0 if self._totals is None else self._totals.n_samples

    @property
    @locked
    def nbytes(self) -> int:
        """Bytes of the state: totals, runs and the raw buffer not yet sorted."""
        total = 0
        if self._totals is not None:
            total += sum(a.nbytes for a in self._totals.to_arrays().values())
        total += sum(r.nbytes for parts in self._parts for r in parts)
        total += sum(c.nbytes for c in self._raw)
        return total

    def _claim(self, k: int, kind: str | None) -> None:
        """Fix (or check) the number of labels and the score family."""
        if self.n_labels is None:
            self.n_labels = k
        elif k != self.n_labels:
            raise ValueError(
                f"y_true has {k} labels; this accumulator has {self.n_labels} "
                "(every update must have the same columns)"
            )
        if kind is not None:
            if self.score_kind is None:
                self.score_kind = kind
            elif kind != self.score_kind:
                raise ValueError(
                    f"y_score is {kind}; earlier updates were {self.score_kind} (ties are "
                    "decided in the scores' own dtype: cast every chunk to one dtype)"
                )
        if self._totals is None:
            self._totals = ReportTotals(n_labels=k)
        if len(self._parts) != k:
            self._parts = [[] for _ in range(k)]

    def update(
        self, y_true: Any, y_score: Any, *, mask: Any = None, sample_weight: Any = None
    ) -> None:
        """Add a chunk of rows: ``y_true`` 0/1 (or bool) and ``y_score`` of shape
        (n, n_labels), ``mask`` (True = label known) of that shape, ``sample_weight``
        of shape (n,). NumPy arrays, anything with ``__array__`` or ``__dlpack__``
        (e.g. CPU torch tensors). The arrays are copied: reusing them afterwards is
        safe. Checks and messages are ``multilabel_report``'s."""
        c = check_report_chunk(
            as_host_array(y_true),
            as_host_array(y_score),
            mask=None if mask is None else as_host_array(mask),
            sample_weight=None if sample_weight is None else as_host_array(sample_weight),
            threshold=self.threshold,
            n_jobs=self.n_jobs,
        )
        n, k = c.shape
        totals = ReportTotals.of_chunk(c, self.n_jobs)
        with self._lock:
            self._claim(k, c.score_kind)
            assert self._totals is not None
            self._totals.add(totals)
            if self.keep_runs and n:
                self._buffer(c)

    def _buffer(self, c: ReportChunk) -> None:
        bits = (
            c.y_pos
            if c.y_pos.dtype == np.uint8
            else np.packbits(c.y_pos, axis=1, bitorder="little")
        )
        self._raw.append(
            _Raw(
                s=np.array(c.s, order="C", copy=True),
                bits=np.ascontiguousarray(bits),
                mask=None if c.mask is None else np.array(c.mask, order="C", copy=True),
                weight=None if c.weight is None else np.array(c.weight, copy=True),
            )
        )
        self._raw_bytes += self._raw[-1].nbytes
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if any(len(p) > MAX_PARTS for p in self._parts):
            self._flush()
            return
        if self._runs_grow:
            # The last sort gave runs larger than the raw cells it read (continuous
            # scores): the raw buffer is the smaller form; sort once, at compute().
            return
        runs_bytes = sum(r.nbytes for p in self._parts for r in p)
        if self._raw_bytes >= max(FLUSH_MIN_BYTES, runs_bytes):
            raw_bytes = self._raw_bytes
            self._flush()
            new_bytes = sum(r.nbytes for p in self._parts for r in p) - runs_bytes
            self._runs_grow = new_bytes > raw_bytes

    def _flush(self) -> None:
        """Sort the raw buffer into runs and merge each label's parts into one."""
        if self._raw:
            raw, self._raw, self._raw_bytes = self._raw, [], 0
            s = np.concatenate([r.s for r in raw])
            bits = np.concatenate([r.bits for r in raw])
            mask = None
            if any(r.mask is not None for r in raw):
                mask = np.concatenate(
                    [r.mask if r.mask is not None else np.ones(r.s.shape, np.bool_) for r in raw]
                )
            weight = None
            if any(r.weight is not None for r in raw):
                weight = np.concatenate(
                    [r.weight if r.weight is not None else np.ones(r.s.shape[0]) for r in raw]
                )
            built = LabelRuns.from_checked(
                s, self.score_kind or str(s.dtype), bits, mask, weight, self.n_jobs
            )
            for parts, r in zip(self._parts, built, strict=True):
                parts.append(r)
        self._parts = [[LabelRuns.merge_all(p)] if len(p) > 1 else p for p in self._parts]

    @locked
    def label_runs(self) -> list[LabelRuns]:
        """Each label's runs of every row so far (flushes the buffer)."""
        if not self.keep_runs:
            raise ValueError("this accumulator keeps no runs (keep_runs=False)")
        self._flush()
        kind = self.score_kind or "float64"
        return [p[0] if p else LabelRuns.empty(kind) for p in self._parts]

    def merge(self, other: MultilabelAccumulator) -> MultilabelAccumulator:
        """Add ``other``'s rows to this state (in place; returns self; ``other`` is
        not changed). Settings (threshold, keep_runs) and shapes must agree."""
        if not isinstance(other, MultilabelAccumulator):
            raise TypeError(f"can only merge a MultilabelAccumulator; got {type(other).__name__}")
        if other.threshold != self.threshold:
            raise ValueError(
                f"cannot merge states of thresholds {self.threshold!r} and {other.threshold!r}"
            )
        if other.keep_runs != self.keep_runs:
            raise ValueError("cannot merge a state with runs and one without (keep_runs)")
        # A snapshot of other under its own lock, then the change under this one's:
        # never both at once, so a.merge(b) and b.merge(a) in two threads cannot
        # deadlock.
        with other._lock:
            n_labels, kind = other.n_labels, other.score_kind
            totals = None
            if other._totals is not None:
                raw, parts = list(other._raw), [list(p) for p in other._parts]
                totals = ReportTotals.from_arrays(other._totals.to_arrays())
        with self._lock:
            if totals is None:
                if n_labels is not None:
                    self._claim(n_labels, None)
                return self
            return self._add(raw, parts, totals, kind)

    def _add(
        self,
        raw: list[_Raw],
        parts: list[list[LabelRuns]],
        totals: ReportTotals,
        kind: str | None,
    ) -> MultilabelAccumulator:
        self._claim(totals.n_labels, kind)
        assert self._totals is not None
        self._totals.add(totals)
        # Raw chunks and runs are never changed in place: sharing them is safe.
        self._raw.extend(raw)
        self._raw_bytes += sum(r.nbytes for r in raw)
        for mine, theirs in zip(self._parts, parts, strict=True):
            mine.extend(theirs)
        self._maybe_flush()
        return self

    @locked
    def compute(self, *, binary: BinaryFigures | None = None) -> MultilabelReport:
        """The ``multilabel_report`` dict of every row so far, with its warnings.

        ``binary``: AP/ROC AUC figures computed elsewhere (required with
        ``keep_runs=False``, e.g. from range-partitioned runs); by default they come
        from the runs kept here."""
        if self._totals is None:
            if self.n_labels is None:
                raise ValueError("compute() needs at least one update (or n_labels)")
            self._claim(self.n_labels, None)
        assert self._totals is not None and self.n_labels is not None
        if binary is None:
            if not self.keep_runs:
                raise ValueError("keep_runs=False: pass the AP/ROC AUC figures as binary=")
            runs = self.label_runs()
            ap, auc, apf, aucf, micro = _core.runs_ap_auc(
                [(r.keys, r.pos, r.neg) for r in runs],
                [r.n_pos for r in runs],
                [r.n_neg for r in runs],
                self.n_jobs,
            )
            binary = BinaryFigures(ap, auc, apf, aucf, *micro)
        elif len(binary.ap) != self.n_labels:
            raise ValueError(f"binary has {len(binary.ap)} labels; expected {self.n_labels}")
        return finish_report(self._totals, binary, self.threshold)

    # ------------------------------------------------------------------ persistence

    @locked
    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """The state as named arrays (flushes the buffer): what ``save`` writes and
        pickling carries. Weights are stored in the narrowest exact dtype, float32
        keys in 4 bytes."""
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "n_labels": self.n_labels,
            "n_labels_arg": self._n_labels_arg,
            "threshold": float(self.threshold),
            "threshold_repr": repr(self.threshold),
            "n_jobs": self.n_jobs,
            "keep_runs": self.keep_runs,
            "score_kind": self.score_kind,
            "has_totals": self._totals is not None,
        }
        out: dict[str, NDArray[Any]] = {"meta": np.array(json.dumps(meta))}
        if self._totals is not None:
            out.update({f"totals.{k}": v for k, v in self._totals.to_arrays().items()})
        if self.keep_runs and self._totals is not None:
            runs = self.label_runs()
            keys = np.concatenate([r.keys for r in runs])
            if self.score_kind == "float32":
                keys = keys.astype(np.uint32)
            out["runs.offsets"] = np.cumsum([0] + [len(r) for r in runs]).astype(np.int64)
            out["runs.keys"] = keys
            out["runs.pos"] = _compact(np.concatenate([r.pos for r in runs]))
            out["runs.neg"] = _compact(np.concatenate([r.neg for r in runs]))
            out["runs.n_pos"] = np.array([r.n_pos for r in runs], dtype=np.int64)
            out["runs.n_neg"] = np.array([r.n_neg for r in runs], dtype=np.int64)
        return out

    @classmethod
    def from_arrays(cls, arrays: Any) -> MultilabelAccumulator:
        """An accumulator from :meth:`to_arrays` (checked: a ``ValueError`` names
        what is wrong)."""
        try:
            meta = json.loads(str(arrays["meta"][()]))
            if not isinstance(meta, dict):
                raise ValueError(f"meta is a {type(meta).__name__}, not an object")
            if not isinstance(meta["keep_runs"], bool):
                raise ValueError(f"keep_runs is {meta['keep_runs']!r}, not a bool")
            if meta.get("format") != FORMAT or meta.get("version") != VERSION:
                raise ValueError(f"format {meta.get('format')!r} version {meta.get('version')!r}")
            threshold: Any = meta["threshold"]
            if meta["threshold_repr"] != repr(threshold):
                threshold = threshold_of(meta["threshold_repr"], threshold)
            acc = cls(
                meta["n_labels_arg"],
                threshold=threshold,
                n_jobs=meta["n_jobs"],
                keep_runs=meta["keep_runs"],
            )
            if meta["has_totals"]:
                totals = ReportTotals.from_arrays(
                    {k[len("totals.") :]: arrays[k] for k in arrays if k.startswith("totals.")}
                )
                if meta["n_labels"] != totals.n_labels:
                    raise ValueError(
                        f"n_labels {meta['n_labels']!r} but totals of {totals.n_labels}"
                    )
                acc._claim(totals.n_labels, meta["score_kind"])
                acc._totals = totals
                if acc.keep_runs:
                    runs = runs_of_arrays(arrays, totals.n_labels, meta["score_kind"])
                    n_pos = np.array([r.n_pos for r in runs], dtype=np.int64)
                    n_neg = np.array([r.n_neg for r in runs], dtype=np.int64)
                    if not (
                        np.array_equal(n_pos, totals.support)
                        and np.array_equal(n_pos + n_neg, totals.n_known)
                    ):
                        raise ValueError(
                            "the runs' positive and negative counts do not match the totals"
                        )
                    acc._parts = [[r] for r in runs]
            elif meta["n_labels"] is not None:
                acc.n_labels = int(meta["n_labels"])
        except (KeyError, TypeError, ValueError, IndexError, json.JSONDecodeError) as e:
            raise ValueError(f"not a saved MultilabelAccumulator state: {e}") from None
        return acc

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the state to ``path`` (an uncompressed NPZ; see :meth:`to_arrays`),
        atomically. An existing file is kept unless ``overwrite=True``."""
        target = Path(path)
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists (pass overwrite=True to replace it)")
        arrays = self.to_arrays()
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)  # type: ignore[arg-type]
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MultilabelAccumulator:
        """An accumulator saved by :meth:`save`."""
        try:
            z = np.load(path, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an NPZ")  # a .npy file
            with z:
                arrays = {k: z[k] for k in z.files}
        except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
            # A truncated or corrupted file (or not an NPZ at all): say so, never
            # suggest allow_pickle.
            raise ValueError(
                f"not a saved MultilabelAccumulator state: {path} is not a readable NPZ "
                f"({type(e).__name__})"
            ) from None
        return cls.from_arrays(arrays)

    def __getstate__(self) -> dict[str, NDArray[Any]]:
        return self.to_arrays()

    def __setstate__(self, state: dict[str, NDArray[Any]]) -> None:
        self.__dict__.update(MultilabelAccumulator.from_arrays(state).__dict__)
        track(self)

    def __repr__(self) -> str:
        return (
            f"MultilabelAccumulator(n_labels={self.n_labels}, threshold={self.threshold!r}, "
            f"n_samples={self.n_samples}, nbytes={self.nbytes})"
        )
