"""A run file of ``toxeval predict`` read as predictions: the current answer of every
dataset row. One more prediction format, read here beside the dumps; the report of a run
file is :func:`toxeval.scoring.runs.score_run`.

The last header of the run file gives the fingerprint and base URL; every dataset row's
request hash is computed again from them and the row's text (and response), and the last
row with that hash is the row's answer (:mod:`toxeval.llm.runfile`). Rows without one
(never asked, failed after retries, or an answer that could not be read) are unscored and
counted, never negatives. A category the system gives no score for on a row (``null``,
e.g. an OpenAI moderation category that maps to nothing in the taxonomy) is masked as an
unknown cell for that row.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.llm.runfile import RunFileError, RunRecord, read_run, request_hash

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.predictions import Predictions
    from toxeval.taxonomy import Taxonomy

__all__ = ["LABELS_NOTE", "RunScores", "run_scores"]

LABELS_NOTE = (
    "scoring method 'labels': the system answers with label sets, so every score is 0 or 1 "
    "and the ranking figures (mAP, ROC AUC, ranking loss) are coarse; use json, logprobs "
    "or sample scoring for graded scores"
)


class RunScores:
    """A run file read against a dataset: ``predictions`` (unscored rows marked),
    ``unknown_cells`` ((N, K) bool, cells the system gave no score for), ``info`` (what
    results.json records about the run), ``notes`` and ``cost`` (the latency, retries and
    tokens of the rows read: :func:`toxeval.llm.run_costs.cost_block`)."""

    def __init__(
        self,
        predictions: Predictions,
        unknown_cells: np.ndarray,
        info: dict[str, Any],
        notes: list[str],
        cost: dict[str, Any] | None = None,
    ) -> None:
        self.predictions = predictions
        self.unknown_cells = unknown_cells
        self.info = info
        self.notes = notes
        self.cost = cost


def _score_cell(path: str | Path, item_id: str, cid: str, v: Any) -> float:
    """A run file's score cell as a float: a finite JSON number (toxeval writes nothing
    else there; a hand-edited or foreign file may), else a :class:`RunFileError`."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            f = float(v)
        except OverflowError:  # an integer past the float range
            f = math.inf if v > 0 else -math.inf
        if math.isfinite(f):
            return f
        said = "NaN" if f != f else str(f)
    else:
        said = {bool: "a bool", str: "a string", list: "a list", dict: "an object"}.get(
            type(v), f"a {type(v).__name__}"
        )
    raise RunFileError(
        f"{path}: row id {item_id!r}: score for {cid!r} is {said}; a score is a finite "
        "number, or null when unknown"
    )


def run_scores(path: str | Path, dataset: Dataset) -> RunScores:
    """Read the run file ``path`` against ``dataset`` (see the module docstring)."""
    from toxeval.files import file_sha256
    from toxeval.llm.plan import dataset_keys
    from toxeval.llm.requests import public_url
    from toxeval.predictions import Predictions

    state = read_run(path)
    if state.header is None:
        raise RunFileError(f"{path}: not a toxeval run file (no header line)")
    fp = state.header.get("fingerprint")
    base = state.header.get("base_url")
    if not isinstance(fp, dict) or not isinstance(base, str):
        raise RunFileError(f"{path}: the header has no fingerprint or base_url")
    tax = dataset.taxonomy
    _check_taxonomy(path, fp, tax)
    n, k = len(dataset.ids), tax.k
    scores = np.zeros((n, k), dtype=np.float64)
    unknown = np.zeros((n, k), dtype=bool)
    scored = np.zeros(n, dtype=bool)
    status_counts: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    failed: list[tuple[str, str]] = []  # (id, error)
    missing: list[str] = []
    unreadable = stale = 0
    graded = False
    truncated = 0
    binary = 0  # scored rows whose scores are 0/1 (a label answer, no logprobs)
    errors: Counter[str] = Counter()
    current: list[RunRecord] = []  # the row read for each dataset item, for the cost block
    for row, (item_id, text, response) in enumerate(dataset_keys(dataset)):
        rec = state.current(item_id, request_hash(base, fp, text, response))
        if rec is None:
            missing.append(item_id)
            stale += item_id in state.latest
            continue
        current.append(rec)
        if rec.error is not None:
            failed.append((item_id, rec.error))
            errors[rec.error.split(":")[0]] += 1
            continue
        if rec.method:
            methods[rec.method] += 1
        if rec.parse_status:
            status_counts[rec.parse_status] += 1
        if rec.scores is None:
            unreadable += 1
            continue
        for c, cid in enumerate(tax.ids):
            v = rec.scores.get(cid)
            if v is None:
                unknown[row, c] = True
            else:
                scores[row, c] = _score_cell(path, item_id, cid, v)
        scored[row] = True
        graded = graded or bool(rec.graded)
        truncated += rec.truncated
        binary += rec.graded is False
    known_ids = set(dataset.ids)
    unknown_ids = [i for i in state.latest if i not in known_ids]
    notes: list[str] = []
    if failed:
        notes.append(
            f"{len(failed)} rows failed after retries and are unscored (first: "
            f"{', '.join(i for i, _ in failed[:5])}); rerunning the same predict command "
            "asks them again"
        )
    if missing:
        notes.append(
            f"{len(missing)} dataset rows have no answer in the run file for its current "
            f"fingerprint and are unscored"
            + (f" ({stale} of them only have stale rows of other settings)" if stale else "")
        )
    if unreadable:
        notes.append(f"{unreadable} answers could not be read (see parse statuses): unscored")
    # the known labels without a score: what counts.no_score_cells counts (a cell whose
    # label the dataset does not know either is one of its unknown labels)
    unscored_known = unknown & np.asarray(dataset.mask, dtype=bool)
    if unscored_known.any():
        cols = [tax.ids[c] for c in np.flatnonzero(unscored_known.any(axis=0))]
        notes.append(
            f"{int(unscored_known.sum())} known labels have no score from the system "
            f"(categories: {', '.join(cols)}): left out of every figure, and counted per "
            "category as 'no score', apart from the dataset's unknown labels"
        )
    if binary and graded:
        notes.append(
            f"{binary} scored rows have 0/1 scores (answers without logprobs, or label "
            "answers) among graded ones"
        )
    if truncated:
        notes.append(
            f"{truncated} scored rows were longer than the model's token limit and were cut "
            "to it: their scores read the start of the text only"
        )
    if "labels" in methods:
        notes.append(LABELS_NOTE)
    if "policy-guard" in methods:
        notes.append(
            f"single-policy guard: one request per category, {k} requests per row; each "
            "score is P(Yes) from the first answer token's logprobs"
        )
    if "llama-guard" in methods and graded:
        notes.append(
            "Llama Guard scores graded from logprobs: P(unsafe) x each hazard code's share "
            "at the code positions (docs/llm.md)"
        )
    if state.corrupt_lines or state.torn_tail:
        notes.append(
            f"the run file has {state.corrupt_lines} unreadable lines"
            + (" and a torn last line" if state.torn_tail else "")
            + " (ignored)"
        )
    preds = Predictions(
        scores=scores,
        scored=scored,
        kind="scores",
        source=str(path),
        format="run",
        sha256=file_sha256(path),
        n_read=state.rows,
        on_mismatch="drop",
        n_missing=len(missing),
        missing_ids=tuple(missing[:5]),
        # answers for ids the dataset does not have: counted (and noted) as a dump's are
        n_unknown=len(unknown_ids),
        unknown_ids=tuple(unknown_ids[:5]),
        n_failed=len(failed),
        failed=tuple(failed[:5]),
        parse_policy="exclude",
        parse_counts=dict(status_counts) if status_counts else None,
        n_parse_excluded=unreadable,
        graded=graded,
        dataset_sha256=dataset.sha256,
    )
    info = {
        "kind": "run",
        "source": str(path),
        "sha256": preds.sha256,
        "detector": state.header.get("detector"),
        "base_url": public_url(base),
        "fingerprint": fp,
        "scoring_method": sorted(methods) or None,
        "rows": {
            "scored": int(scored.sum()),
            "failed": len(failed),
            "unreadable": unreadable,
            "not_answered": len(missing),
            "stale_only": stale,
            "truncated": truncated,
            "binary": binary,
        },
        "errors": dict(errors),
        "parse_status_counts": dict(status_counts),
    }
    from toxeval.llm.run_costs import cost_block

    return RunScores(preds, unknown, info, notes, cost_block(current))


def _check_taxonomy(path: str | Path, fingerprint: dict[str, Any], tax: Taxonomy) -> None:
    """The run's answers are scores for the categories of the taxonomy the model was
    asked about (the fingerprint's); read against a dataset of another taxonomy, the
    categories that share an id would be scored under definitions the model never saw."""
    from toxeval.llm.requests import taxonomy_fingerprint
    from toxeval.llm.rows import taxonomy_sha256

    asked = fingerprint.get("taxonomy")
    if isinstance(asked, dict):  # an API run: {"name", "sha256"}
        name, same = asked.get("name"), asked.get("sha256") == taxonomy_fingerprint(tax)["sha256"]
    elif isinstance(asked, str):  # an in-process detector's run: the sha256 alone
        name, same = None, asked == taxonomy_sha256(tax)
    else:
        return
    if not same:
        what = f"taxonomy {name!r}" if name else "another taxonomy"
        raise RunFileError(
            f"{path}: its answers were asked about {what}, but the "
            f"dataset is read with taxonomy {tax.name!r} (other categories or definitions); "
            f"score it with the taxonomy of the run (--taxonomy), or run predict again "
            "with this one"
        )
