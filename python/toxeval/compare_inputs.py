"""The inputs of ``toxeval compare``: results folders (``DIR`` or ``NAME=DIR``) read into
:class:`SystemResult`, each checked against itself (``results.json`` and
``scored_rows.parquet`` describe the same evaluation), and the systems of one dataset
matched row by row (:func:`aligned`).

Paired tests and a shared interval need the same items, not the same order: the rows of
every system are matched by id and sorted by it, so the paired resamples do not depend on
the order of the folders or of their rows. Systems that scored different items (an id only one of them has), under different
taxonomies or with different labels for an item, are refused with a
:class:`CompareError` that says which and why.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.compare_costs import cost_figures
from toxeval.compare_reported import reported_blocks
from toxeval.scored_rows import FILE_NAME, ScoredRows, read_scored_rows

__all__ = [
    "CompareError",
    "SystemResult",
    "aligned",
    "check_reported",
    "keep_common_rows",
    "load_system",
    "split_spec",
]


class CompareError(ValueError):
    """Results folders that cannot be compared; says which and why."""


@dataclass(frozen=True)
class SystemResult:
    """One results folder: a system's scored rows on one dataset."""

    name: str
    path: Path
    dataset: str
    dataset_sha256: str
    rows: ScoredRows
    # mAP and label ranking loss as results.json reports them (None: NaN, not a number,
    # or not there), checked against what the rows give (:func:`check_reported`)
    reported: Mapping[str, float | None] = dataclasses.field(default_factory=dict)
    # latency, tokens and cost of a run file's answers (toxeval.compare_costs); None: none
    cost: Mapping[str, float | None] | None = None
    # calibration, slices and operating points of its report (toxeval.compare_reported)
    blocks: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def _system_name(system: Mapping[str, Any], folder: Path) -> str:
    for key in ("label", "detector", "model"):
        if system.get(key):
            return str(system[key])
    source = system.get("source") or system.get("predictions")
    if source:
        return Path(str(source)).stem
    return folder.name


def split_spec(spec: str | Path) -> tuple[str | None, Path]:
    """``NAME=DIR`` as ``(NAME, DIR)``, ``DIR`` as ``(None, DIR)``. A name may itself hold
    ``=``: the split is at the first ``=`` after which an existing directory is named, so
    ``a=b=results/x`` is system ``a=b`` when ``results/x`` exists."""
    text = str(spec)
    if Path(text).exists():
        return None, Path(text)
    cuts = [i for i, ch in enumerate(text) if ch == "="]
    for i in cuts:
        if i > 0 and Path(text[i + 1 :]).is_dir():
            return text[:i], Path(text[i + 1 :])
    if cuts and cuts[0] > 0:
        return text[: cuts[0]], Path(text[cuts[0] + 1 :])
    return None, Path(text)


def load_system(spec: str | Path) -> SystemResult:
    """A results folder, given as ``DIR`` or ``NAME=DIR`` (``NAME`` labels the system)."""
    name, folder = split_spec(spec)
    if not folder.is_dir():
        raise CompareError(f"{folder}: not a results folder (no such directory)")
    rj = folder / "results.json"
    if rj.exists() and not rj.is_file():  # a named pipe would be waited on forever
        raise CompareError(f"{rj}: not a regular file")
    try:
        results = json.loads(rj.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(f"{folder}: no results.json (write it with --out)") from None
    except (OSError, ValueError, RecursionError) as e:
        raise CompareError(f"{rj}: not readable JSON ({e})") from None
    system = results.get("system", {}) if isinstance(results, dict) else None
    dataset = results.get("dataset", {}) if isinstance(results, dict) else None
    if not isinstance(system, dict) or not isinstance(dataset, dict):
        raise CompareError(
            f"{rj}: not a toxeval results.json (expected an object with "
            '"system" and "dataset" objects)'
        )
    config = results.get("config")
    if isinstance(config, dict) and config.get("out_of_core") and not (folder / FILE_NAME).exists():
        raise CompareError(
            f"{folder}: scored out of core, so it keeps no {FILE_NAME} to resample; compare "
            "needs the scored rows (score the data in memory to compare it)"
        )
    try:
        rows = read_scored_rows(folder / FILE_NAME)
    except ValueError as e:
        raise CompareError(str(e)) from None
    _check_agreement(folder, results, rows)
    sha = rows.dataset_sha256 or dataset.get("sha256")
    if not sha:
        raise CompareError(f"{folder}: the dataset is not identified (no sha256)")
    if not rows.ids:
        raise CompareError(f"{folder}: no scored rows, nothing to compare")
    return SystemResult(
        name=name or _system_name(system, folder),
        path=folder,
        dataset=str(dataset.get("name") or sha[:12]),
        dataset_sha256=str(sha),
        rows=rows,
        reported=_reported_figures(results),
        cost=cost_figures(results.get("cost")),
        blocks=reported_blocks(results),
    )


def _reported_figures(results: Mapping[str, Any]) -> dict[str, float | None]:
    """``map`` and ``label_ranking_loss`` of results.json's ``figures`` that are there
    (a number, or ``null`` for NaN), as floats (NaN for ``null``)."""
    figures = results.get("figures")
    out: dict[str, float | None] = {}
    if not isinstance(figures, dict):
        return out
    for key in ("map", "label_ranking_loss"):
        v = figures.get(key, False)
        if v is None:
            out[key] = float("nan")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            # an integer too large for a float is no figure a run wrote: infinite, which
            # no computed figure equals, so check_reported refuses the folder
            out[key] = float(v) if not isinstance(v, int) or abs(v) < 2**53 else math.inf
    return out


def check_reported(system: SystemResult, computed: Mapping[str, float]) -> None:
    """The figures the rows of ``scored_rows.parquet`` give equal those ``results.json``
    reports (to 1e-9 relative; the two are computed by different kernels). A file
    swapped in from another run of the same dataset and size, or one half of a folder
    left by an interrupted write, is refused rather than resampled as this system's."""
    labels = {"map": "mAP", "label_ranking_loss": "label ranking loss"}
    for key, want in system.reported.items():
        got = computed.get(key)
        if want is None or got is None:
            continue
        if math.isnan(want) and math.isnan(got):
            continue
        if math.isnan(want) or math.isnan(got) or abs(got - want) > 1e-9 * max(1.0, abs(want)):
            raise CompareError(
                f"{system.path}: results.json reports {labels[key]} {want:.6g}, but the rows "
                f"of its {FILE_NAME} give {got:.6g}: the two files are not from the same "
                "evaluation (write the folder again with toxeval evaluate/score --out)"
            )


def _check_agreement(folder: Path, results: Mapping[str, Any], rows: ScoredRows) -> None:
    """``results.json`` and ``scored_rows.parquet`` describe the same evaluation: the
    same dataset (sha256) and as many scored rows (when results.json says)."""
    dataset_sha = results.get("dataset", {}).get("sha256")
    if dataset_sha and rows.dataset_sha256 and dataset_sha != rows.dataset_sha256:
        raise CompareError(
            f"{folder}: results.json and {FILE_NAME} name different datasets "
            f"(sha256 {str(dataset_sha)[:12]} vs {rows.dataset_sha256[:12]})"
        )
    counts = results.get("counts")
    scored = counts.get("scored") if isinstance(counts, dict) else None
    if isinstance(scored, int) and scored != len(rows.ids):
        raise CompareError(
            f"{folder}: results.json counts {scored} scored rows, {FILE_NAME} holds "
            f"{len(rows.ids)}; they are not from the same evaluation"
        )


def keep_common_rows(group: Sequence[SystemResult]) -> tuple[list[SystemResult], dict[str, int]]:
    """The systems of one dataset, each cut to the items every one of them scored (in its
    own order), and how many rows each left out (only those that left some out). A
    system cut this way no longer has the figures its results.json reports, so those are
    not checked against it (``reported`` is emptied)."""
    shared = set(group[0].rows.ids).intersection(*(set(g.rows.ids) for g in group[1:]))
    out: list[SystemResult] = []
    left_out: dict[str, int] = {}
    for sr in group:
        r = sr.rows
        if len(r.ids) == len(shared):
            out.append(sr)
            continue
        keep = np.fromiter((i in shared for i in r.ids), dtype=bool, count=len(r.ids))
        rows = dataclasses.replace(
            r,
            ids=tuple(i for i in r.ids if i in shared),
            y_true=r.y_true[keep],
            mask=r.mask[keep],
            scores=r.scores[keep],
        )
        left_out[sr.name] = len(r.ids) - len(shared)
        out.append(dataclasses.replace(sr, rows=rows, reported={}))
    if not shared:
        raise CompareError(
            f"the systems on {group[0].dataset} have no scored item in common: nothing to compare"
        )
    return out, left_out


def aligned(group: Sequence[SystemResult]) -> list[SystemResult]:
    """The systems of one dataset, each with its rows sorted by id (ids are unique in a
    ``scored_rows.parquet``), so that the paired resamples, hence the paired tests and
    the regression gate's verdict, depend neither on the order of the folders nor on
    the order of the rows in each (an LLM run writes them as the answers come back).
    Refused: an id that only some systems scored, another taxonomy, other labels for
    the same item."""
    first = group[0]
    ids = first.rows.ids
    by_id = sorted(range(len(ids)), key=ids.__getitem__)
    if by_id != list(range(len(ids))):
        o = np.asarray(by_id, dtype=np.intp)
        r = first.rows
        r = dataclasses.replace(
            r, ids=tuple(ids[i] for i in by_id), y_true=r.y_true[o], mask=r.mask[o],
            scores=r.scores[o],
        )  # fmt: skip
        first = dataclasses.replace(first, rows=r)
    out = [first]
    for other in group[1:]:
        a, b = first.rows, other.rows
        if a.ids != b.ids:
            if set(a.ids) != set(b.ids):
                raise CompareError(
                    f"{first.name} ({first.path}) and {other.name} ({other.path}) were scored "
                    f"on different items of {first.dataset}: "
                    f"{_only(a.ids, b.ids)} only in the first, {_only(b.ids, a.ids)} only in "
                    "the second. Paired comparison needs the same scored items (in any "
                    "order): compare on the items both scored with --common-rows (the output "
                    "says how many rows each system leaves out), or score the missing items "
                    "(a run file's failed rows: run the same predict command again)."
                )
            where = {item: k for k, item in enumerate(b.ids)}
            order = np.fromiter((where[item] for item in a.ids), dtype=np.intp, count=len(a.ids))
            b = dataclasses.replace(
                b, ids=a.ids, y_true=b.y_true[order], mask=b.mask[order], scores=b.scores[order]
            )
            other = dataclasses.replace(other, rows=b)
        if a.category_ids != b.category_ids:
            raise CompareError(
                f"{first.name} and {other.name} use different taxonomies on {first.dataset}"
            )
        if not (
            np.array_equal(a.mask, b.mask) and np.array_equal(a.y_true * a.mask, b.y_true * b.mask)
        ):
            raise CompareError(
                f"{first.name} and {other.name} have different labels for the same items of "
                f"{first.dataset} (another labelling rule?)"
            )
        out.append(other)
    return out


def _only(ids: Sequence[str], others: Sequence[str]) -> str:
    """How many of ``ids`` are not in ``others``, with the first few of them."""
    missing = sorted(set(ids) - set(others))
    if not missing:
        return "0 ids"
    shown = ", ".join(repr(i) for i in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return f"{len(missing)} ids ({shown})"
