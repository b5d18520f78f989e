"""Per-category operating points: the score threshold at which a detector reaches a target
precision, recall or false-positive rate, the other rates there, and the thresholds file
a service loads.

A threshold ``t`` flags a row when its score is ``>= t`` (scikit-learn's
``precision_recall_curve`` convention); the candidate thresholds of a category are its
distinct known scores. For a target

* ``precision=p``: the highest recall whose precision is at least ``p``, at the highest
  threshold that gives it (a lower one would add only false positives: precision is not
  monotone in the threshold);
* ``recall=r``: the highest threshold whose recall is at least ``r`` (the fewest flags
  that keep the recall);
* ``fpr=f``: the lowest threshold whose false-positive rate is at most ``f``;

computed exactly from the sorted scores (cumulative counts), over the rows whose label
of that category is known. A category no threshold brings to the target has none, and
says why. Rates come with Wilson score intervals: at a fixed threshold each rate is a
binomial proportion. A threshold chosen on the rows it is then measured on is optimistic;
choose on one split and measure on another (``apply_thresholds``), as docs/cli.md
("Operating points") shows.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "OperatingPoint",
    "Target",
    "apply_thresholds",
    "choose_thresholds",
    "operating_points_lines",
    "operating_points_table",
    "parse_target",
    "points_for",
    "read_thresholds",
    "read_thresholds_mapping",
    "section",
    "thresholds_document",
    "thresholds_of",
    "wilson_interval",
]

FORMAT = "toxeval-thresholds/1"
_KINDS = ("precision", "recall", "fpr")


@dataclass(frozen=True)
class Target:
    """``kind`` (precision, recall or fpr) and the value it must reach."""

    kind: str
    value: float

    def __str__(self) -> str:
        return f"{self.kind}={self.value:g}"


def parse_target(text: str) -> Target:
    """``precision=0.9``, ``recall=0.8`` or ``fpr=0.05`` as a :class:`Target`
    (``ValueError`` naming the problem otherwise)."""
    kind, sep, value = text.partition("=")
    kind = kind.strip().lower()
    if not sep or kind not in _KINDS:
        raise ValueError(
            f"--operating-point {text!r}: give precision=P, recall=R or fpr=F (a rate in [0, 1])"
        )
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"--operating-point {text!r}: {value.strip()!r} is not a number") from None
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"--operating-point {text!r}: the rate must be in [0, 1]")
    return Target(kind, v)


def wilson_interval(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of ``k`` successes in ``n`` trials (``None`` when
    ``n == 0``)."""
    if n == 0:
        return None
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence_level / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # k = 0 and k = n bound at exactly 0 and 1 (the formula leaves rounding there)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class OperatingPoint:
    """One category at one threshold: the counts over its known rows and the rates.
    ``threshold`` is ``None`` when no threshold reaches the target (``reason`` says why)."""

    category: str
    threshold: float | None
    tp: int
    fp: int
    fn: int
    tn: int
    reason: str | None = None

    def rates(self, confidence_level: float = 0.95) -> dict[str, Any]:
        """precision, recall and fpr (NaN where undefined), each with its interval."""
        out: dict[str, Any] = {}
        for name, k, n in (
            ("precision", self.tp, self.tp + self.fp),
            ("recall", self.tp, self.tp + self.fn),
            ("fpr", self.fp, self.fp + self.tn),
        ):
            out[name] = k / n if n else math.nan
            out[f"{name}_interval"] = wilson_interval(k, n, confidence_level)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "threshold": self.threshold,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            **self.rates(),
            "reason": self.reason,
        }


def _curve(
    y: NDArray[Any], s: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Distinct scores descending and the true / false positives flagged at each
    (score >= that threshold)."""
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s_sorted)), s_sorted.shape[0] - 1]
    tps = np.cumsum(y_sorted, dtype=np.int64)[last]
    fps = (last + 1) - tps
    return s_sorted[last].astype(np.float64), tps, fps


def _point(category: str, y: NDArray[Any], s: NDArray[Any], target: Target) -> OperatingPoint:
    pos = int(y.sum())
    neg = int(y.shape[0] - pos)
    if y.shape[0] == 0:
        return OperatingPoint(category, None, 0, 0, 0, 0, "no known label")
    if target.kind in ("precision", "recall") and pos == 0:
        return OperatingPoint(category, None, 0, 0, 0, neg, "no known positive")
    if target.kind == "fpr" and neg == 0:
        return OperatingPoint(category, None, 0, 0, pos, 0, "no known negative")
    thr, tps, fps = _curve(y, s)
    if target.kind == "precision":
        # the rates as scikit-learn's curves compute them, so a rate equal to the
        # target compares as there
        pick = np.flatnonzero(tps / (tps + fps) >= target.value)
        # the lowest such threshold has the most true positives; the highest threshold
        # with as many flags no more false positives (tps rises as the threshold falls)
        i = int(np.searchsorted(tps, tps[pick[-1]])) if pick.size else None
    elif target.kind == "recall":
        pick = np.flatnonzero(tps / pos >= target.value)
        i = int(pick[0]) if pick.size else None  # first = highest threshold
    else:
        pick = np.flatnonzero(fps / neg <= target.value)
        i = int(pick[-1]) if pick.size else None
    if i is None:
        return OperatingPoint(category, None, 0, 0, pos, neg, f"no threshold reaches {target}")
    tp, fp = int(tps[i]), int(fps[i])
    return OperatingPoint(category, float(thr[i]), tp, fp, pos - tp, neg - fp)


def _columns(
    y_true: Any, scores: Any, mask: Any, categories: Sequence[str]
) -> Iterator[tuple[str, NDArray[np.int64], NDArray[np.float64]]]:
    """(category, labels, scores) of each category's known rows; the inputs are viewed
    as arrays once, and each column is taken as a float64 copy of its own."""
    y_all, s_all = np.asarray(y_true), np.asarray(scores)
    m_all = None if mask is None else np.asarray(mask, dtype=bool)
    for j, c in enumerate(categories):
        m = None if m_all is None else m_all[:, j]
        yield (c, *_known(y_all[:, j], s_all[:, j].astype(np.float64), m, c))


def _known(
    y: NDArray[Any], s: NDArray[np.float64], keep: NDArray[np.bool_] | None, category: str
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    if keep is None:
        keep = np.ones(y.shape[0], dtype=bool)
    bad = int(np.count_nonzero(~np.isfinite(s[keep])))
    if bad:  # a NaN would sort as a threshold that flags nothing, with counts that say otherwise
        raise ValueError(
            f"category {category!r}: {bad} NaN or infinite scores on rows with a known label"
        )
    return (y[keep] == 1).astype(np.int64), s[keep]


def choose_thresholds(
    y_true: Any, scores: Any, mask: Any, categories: Sequence[str], target: Target
) -> list[OperatingPoint]:
    """Each category's operating point for ``target`` (see the module docstring);
    ``y_true`` and ``scores`` are (N, K) in ``categories`` order, ``mask`` True where the
    label is known (``None``: every label known)."""
    return [_point(c, y, s, target) for c, y, s in _columns(y_true, scores, mask, categories)]


def apply_thresholds(
    y_true: Any,
    scores: Any,
    mask: Any,
    categories: Sequence[str],
    thresholds: Mapping[str, float | None],
) -> list[OperatingPoint]:
    """The counts and rates of each category at the given thresholds (chosen on another
    split); a category the thresholds do not name, or name as ``None``, has none."""
    out = []
    for c, y, s in _columns(y_true, scores, mask, categories):
        t = thresholds.get(c)
        pos, neg = int(y.sum()), int(y.shape[0] - y.sum())
        if t is None:
            why = "no threshold given" if c not in thresholds else "no threshold was chosen"
            out.append(OperatingPoint(c, None, 0, 0, pos, neg, why))
            continue
        flag = s >= t
        tp = int(np.count_nonzero(flag & (y == 1)))
        fp = int(np.count_nonzero(flag & (y == 0)))
        out.append(OperatingPoint(c, float(t), tp, fp, pos - tp, neg - fp))
    return out


def points_for(
    y_true: Any,
    scores: Any,
    mask: Any,
    categories: Sequence[str],
    *,
    target: Target | None = None,
    thresholds: Mapping[str, float | None] | None = None,
    source: str = "the thresholds",
) -> list[OperatingPoint]:
    """Thresholds chosen for ``target``, or ``thresholds`` (from ``source``) applied; a
    threshold for a category these rows do not have is a ``ValueError``."""
    if thresholds is not None:
        unknown = sorted(set(thresholds) - set(categories))
        if unknown:
            raise ValueError(f"{source}: categories these rows do not have: {', '.join(unknown)}")
        return apply_thresholds(y_true, scores, mask, categories, thresholds)
    if target is None:
        raise ValueError("give a target or thresholds")
    return choose_thresholds(y_true, scores, mask, categories, target)


def thresholds_document(
    points: Sequence[OperatingPoint], target: Target, source: Mapping[str, Any]
) -> dict[str, Any]:
    """The thresholds file: what a service loads (``thresholds``: category id ->
    threshold or null), the target, where the thresholds were chosen, and each
    category's counts and rates there."""
    return {
        "format": FORMAT,
        "target": str(target),
        "rule": "a row is flagged in a category when its score >= the threshold",
        "chosen_on": dict(source),
        "thresholds": {p.category: p.threshold for p in points},
        "operating_points": [_finite(p.to_dict()) for p in points],
    }


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """NaN as None, so the file is strict JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


_MAX_BYTES = 64 << 20  # far above any thresholds file or results.json


def _load_json(p: Path) -> Any:
    """The JSON document in ``p`` (:func:`toxeval.json_lines.decode_json_document`);
    ``ValueError`` also for a file too large to be one."""
    from toxeval.json_lines import decode_json_document

    if p.stat().st_size > _MAX_BYTES:
        raise ValueError(f"larger than {_MAX_BYTES >> 20} MiB")
    return decode_json_document(p.read_text(encoding="utf-8"))


def _finite_number(v: Any) -> bool:
    """``v`` is a finite float (an integer too large for a float is not)."""
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def read_thresholds(path: str | Path) -> dict[str, float | None]:
    """The ``thresholds`` of a thresholds file (``ValueError`` naming the file and what
    is wrong otherwise)."""
    p = Path(path)
    if p.exists() and not p.is_file():  # a named pipe would be waited on, not read
        raise ValueError(f"{path}: not a regular file")
    try:
        doc = _load_json(p)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable thresholds file ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a toxeval thresholds file (no "format": "{FORMAT}")')
    return read_thresholds_mapping(doc.get("thresholds"), str(path))


def read_thresholds_mapping(raw: Any, path: str) -> dict[str, float | None]:
    """A ``thresholds`` mapping checked: category id -> finite number or null."""
    if not isinstance(raw, dict):
        raise ValueError(f'{path}: "thresholds" must map category ids to numbers or null')
    out: dict[str, float | None] = {}
    for k, v in raw.items():
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, numbers.Real) or not _finite_number(v)
        ):
            shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
            raise ValueError(f"{path}: the threshold of {k!r} is {shown}, not a finite number")
        out[str(k)] = None if v is None else float(v)
    return out


def section(
    points: Sequence[OperatingPoint],
    *,
    target: Target | None = None,
    thresholds_from: str | None = None,
) -> dict[str, Any]:
    """The ``operating_points`` block of ``results.json``: chosen here for ``target``, or
    measured at the thresholds of ``thresholds_from``."""
    return {
        "target": None if target is None else str(target),
        "thresholds_from": thresholds_from,
        "rule": "a row is flagged in a category when its score >= the threshold",
        "thresholds": {p.category: p.threshold for p in points},
        "points": [_finite(p.to_dict()) for p in points],
    }


def thresholds_of(path: str | Path) -> dict[str, float | None]:
    """The thresholds in a thresholds file, or in the ``operating_points`` of a results
    folder's ``results.json`` (``ValueError`` when it has none)."""
    p = Path(path)
    if not p.is_dir():
        return read_thresholds(p)
    doc_path = p / "results.json"
    if doc_path.exists() and not doc_path.is_file():
        raise ValueError(f"{doc_path}: not a regular file")
    try:
        doc = _load_json(doc_path)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: no readable results.json ({e})") from None
    block = doc.get("operating_points") if isinstance(doc, dict) else None
    if not isinstance(block, dict) or block.get("target") is None:
        raise ValueError(
            f"{path}: its results.json holds no thresholds chosen with --operating-point"
        )
    return read_thresholds_mapping(block.get("thresholds"), str(doc_path))


HEADER = ("category", "threshold", "precision", "recall", "FPR", "TP", "FP", "FN", "TN")


def operating_points_table(block: Mapping[str, Any]) -> tuple[str, list[list[str]]]:
    """The caption and the cells (one list per category, in :data:`HEADER` order) of the
    ``operating_points`` block, as report.md and the terminal show them."""
    how = (
        f"chosen on these rows for {block['target']} (optimistic here: measure them on "
        "another split with --thresholds-from)"
        if block.get("target")
        else f"from {block.get('thresholds_from')}"
    )
    caption = (
        f"Thresholds {how}; a row is flagged when its score >= the threshold. Rates with "
        "95% Wilson intervals."
    )
    rows = []
    for p in block["points"]:
        cells = [str(p["category"])]
        cells.append(
            f"{p['threshold']:.6g}" if p["threshold"] is not None else f"none ({p['reason']})"
        )
        for name in ("precision", "recall", "fpr"):
            v, ci = p[name], p[f"{name}_interval"]
            cells.append("n/a" if v is None else f"{v:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]")
        cells += [str(p[k]) for k in ("tp", "fp", "fn", "tn")]
        rows.append(cells)
    return caption, rows


def operating_points_lines(block: Mapping[str, Any], text: Any = str) -> list[str]:
    """The ``operating_points`` block as Markdown (``text`` escapes user text)."""
    from toxeval.compare_markup import markdown_table

    caption, rows = operating_points_table(block)
    return markdown_table(caption, HEADER, rows, text_columns=1, text=text)
