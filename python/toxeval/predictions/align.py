"""Predictions aligned to a dataset: scores in dataset row order, the mismatch policy
(``on_mismatch``: error, or drop and count), rows without a prediction (null scores,
failed requests) left unscored and counted, and raw text parsed with ``parse_policy``.
The id join itself is :func:`toxeval.ids.join_ids`.

Nothing is dropped silently. Ids of the dataset without a prediction (*missing*), ids
given twice (*duplicate*) and ids not in the dataset (*unknown*) are counted; with
``on_mismatch="error"`` (the default) any of them raises :class:`PredictionError`, with
``"drop"`` later duplicates and unknown rows are dropped and missing dataset rows are
left out of scoring; the counts and the first few ids go into the report either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.ids import SHOW, IdJoin
from toxeval.predictions.forms import Scores, all_binary, row_name, text_column, validate_scores
from toxeval.predictions.schema import (
    ERROR_COLUMN,
    ID_COLUMNS,
    LABEL_COLUMNS,
    MISMATCH_POLICIES,
    PARSE_POLICIES,
    SCORE_COLUMNS,
    STATUSES,
    Kind,
    OnMismatch,
    ParsePolicy,
    PredictionError,
    Predictions,
    UnparseableOutputs,
    check_choice,
    ids_text,
    resolve_category,
)
from toxeval.taxonomy import LabelMapping, Taxonomy

if TYPE_CHECKING:
    from toxeval.datasets import Dataset


def assemble_scores(scores: Scores, join: IdJoin, n: int, n_read: int) -> np.ndarray:
    """The (n, K) matrix in dataset row order: row ``dst[i]`` is prediction row ``src[i]``,
    zeros elsewhere.

    Columns read from a table go into a Fortran-order matrix (K contiguous columns; the
    metrics take either order and give identical results): each Arrow chunk is copied
    once, sequentially when the rows are already in dataset order, else scattered to
    its dataset rows, so no (M, K) copy in file order and no concatenation is made."""
    if isinstance(scores, np.ndarray):
        if is_identity_join(join, n) and scores.shape[0] == n:
            return scores  # rows already in dataset order: no gather
        return gather_rows(scores, join, n)
    k = len(scores)
    src, dst = join.src, join.dst
    full = dst.size == n
    out_t = np.empty((k, n)) if full else np.zeros((k, n))
    if is_identity_join(join, n) and n_read == n:
        for c, chunks in enumerate(scores):
            at = 0
            for chunk in chunks:
                out_t[c, at : at + len(chunk)] = chunk
                at += len(chunk)
        return np.asarray(out_t.T)
    # where each prediction row goes (-1: not used)
    pos = np.full(n_read, -1, dtype=np.intp)
    pos[src] = dst
    every = src.size == n_read
    for c, chunks in enumerate(scores):
        col = out_t[c]
        at = 0
        for chunk in chunks:
            to = pos[at : at + len(chunk)]
            if every:
                col[to] = chunk
            else:
                used = to >= 0
                col[to[used]] = chunk[used]
            at += len(chunk)
    return np.asarray(out_t.T)


def mismatch_error(path: str, j: IdJoin, n_dataset: int, n_read: int) -> PredictionError:
    parts = []
    if j.n_missing:
        parts.append(
            f"{j.n_missing} of {n_dataset} dataset ids have no prediction "
            f"({ids_text(j.missing_ids, j.n_missing)})"
        )
    if j.n_duplicate:
        parts.append(
            f"{j.n_duplicate} rows repeat an id already seen ({ids_text(j.duplicate_ids, j.n_duplicate)})"
        )
    if j.n_unknown:
        parts.append(
            f"{j.n_unknown} of {n_read} prediction ids are not in the dataset "
            f"({ids_text(j.unknown_ids, j.n_unknown)})"
        )
    return PredictionError(
        f"{path}: predictions do not match the dataset: {'; '.join(parts)}. "
        f"Pass on_mismatch='drop' (--on-mismatch drop) to score the matching rows only"
    )


def is_identity_join(join: IdJoin, n: int) -> bool:
    return join.src.size == n and bool(
        np.array_equal(join.src, np.arange(n)) and np.array_equal(join.dst, join.src)
    )


def gather_rows(scores: np.ndarray, join: IdJoin, n: int) -> np.ndarray:
    """(n, K) scores in dataset row order: row ``dst[i]`` is ``scores[src[i]]``, zeros
    elsewhere (``take`` along rows copies whole rows, unlike fancy indexing)."""
    if join.dst.size == n:  # every dataset row filled: one gather through the inverse map
        inv = np.empty(n, dtype=np.intp)
        inv[join.dst] = join.src
        return np.take(np.ascontiguousarray(scores, dtype=np.float64), inv, axis=0)
    out = np.zeros((n, scores.shape[1]), dtype=np.float64)
    out[join.dst] = np.take(scores, join.src, axis=0)
    return out


@dataclass(frozen=True)
class UnknownRows:
    """The rows of a dump (file order) that hold no prediction: a null prediction (null
    ``scores`` / ``labels`` / ``output``, or every score column empty) or a failed
    request (a non-null ``error`` field; failed wins when both hold)."""

    null: np.ndarray  # (M,) bool
    failed: np.ndarray  # (M,) bool
    errors: pa.Array | None  # the 'error' column, when there is one

    @property
    def rows(self) -> np.ndarray:
        out: np.ndarray = self.null | self.failed
        return out


def unknown_rows(table: pa.Table, taxonomy: Taxonomy) -> UnknownRows:
    """Which rows of ``table`` hold no prediction (see :class:`UnknownRows`)."""
    m = table.num_rows
    failed = np.zeros(m, dtype=bool)
    errors = None
    if ERROR_COLUMN in table.column_names:
        errors = table.column(ERROR_COLUMN).combine_chunks()
        t = errors.type
        if not pa.types.is_null(t):
            present = errors.is_valid()
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                present = pc.and_(present, pc.not_equal(errors, "").fill_null(False))
            elif pa.types.is_boolean(t):
                present = errors.fill_null(False)
            failed = np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    null = np.zeros(m, dtype=bool)
    cols = _prediction_columns(table, taxonomy)
    # a column without nulls means no row is all-null: nothing to read
    if cols and all(table.column(name).null_count for name in cols):
        null[:] = True
        for name in cols:
            null &= np.asarray(
                table.column(name).is_null().to_numpy(zero_copy_only=False), dtype=bool
            )
    return UnknownRows(null=null & ~failed, failed=failed, errors=errors)


def check_one_form(table: pa.Table, taxonomy: Taxonomy, unknown: UnknownRows, src: str) -> None:
    """Raise :class:`PredictionError` when rows left without a prediction in the form the
    file is read in (``scores``, say) give one in another form (``labels``) that no row
    with a prediction carries: the file mixes forms (two dumps joined, a JSONL whose
    first line decided the form), and those rows would be counted as null predictions
    while their predictions are there. A column of another form that the predicted rows
    carry too (scores with their thresholded labels beside them) is a companion column,
    not a second form; text columns are never one (the input text, the raw output)."""
    chosen = _prediction_columns(table, taxonomy)
    if not chosen or not unknown.null.any():
        return
    has = ~unknown.rows
    for other in _form_columns(table, taxonomy):
        if other == chosen or set(other) & set(chosen):
            continue
        given = np.zeros(table.num_rows, dtype=bool)
        for name in other:
            given |= np.asarray(
                table.column(name).is_valid().to_numpy(zero_copy_only=False), dtype=bool
            )
        stray = given & unknown.null
        if stray.any() and not (given & has).any():
            ids = table.column("id").combine_chunks() if "id" in table.column_names else None
            row = int(np.flatnonzero(stray)[0])
            what = ", ".join(repr(c) for c in other[:3]) + (", ..." if len(other) > 3 else "")
            n = int(stray.sum())
            rows = f"{n} row gives its" if n == 1 else f"{n} rows give their"
            raise PredictionError(
                f"{src}: {rows} prediction in {what} (first: {row_name(ids, row)}), the "
                "other rows in "
                f"{', '.join(repr(c) for c in chosen[:3])}{', ...' if len(chosen) > 3 else ''}"
                "; a file holds one form of prediction: write them in one form (or "
                "split the file)"
            )


def _form_columns(table: pa.Table, taxonomy: Taxonomy) -> list[list[str]]:
    """The columns of each prediction form present, other than text: a score column,
    the columns named after categories, each label column."""
    names = table.column_names
    forms = [[n] for n in SCORE_COLUMNS if n in names]
    named = [n for n in names if n not in ID_COLUMNS and resolve_category(n, taxonomy) is not None]
    if named:
        forms.append(named)
    forms += [[n] for n in LABEL_COLUMNS if n in names]
    return forms


def _prediction_columns(table: pa.Table, taxonomy: Taxonomy) -> list[str]:
    """The column(s) holding the predictions, in :func:`extract_scores`'s order of preference:
    a ``scores`` column (object, map or vector; all-null too), the columns named after
    categories, a ``labels`` column, a text column. A row is a null prediction when all
    of them are null."""
    names = table.column_names
    for name in SCORE_COLUMNS:
        if name in names:
            typ = table.schema.field(name).type
            if (
                pa.types.is_struct(typ)
                or pa.types.is_map(typ)
                or pa.types.is_list(typ)
                or pa.types.is_large_list(typ)
                or pa.types.is_fixed_size_list(typ)
                or pa.types.is_null(typ)
            ):
                return [name]
    named = [n for n in names if n not in ID_COLUMNS and resolve_category(n, taxonomy) is not None]
    if named:
        return named
    for name in LABEL_COLUMNS:
        if name in names:
            return [name]
    text = text_column(table)
    return [text] if text is not None else []


def without_unknown_rows(join: IdJoin, unknown: UnknownRows) -> tuple[IdJoin, np.ndarray]:
    """``join`` restricted to the rows that hold a prediction, its ``src`` renumbered to
    count those rows only (the rows extraction kept); and the dataset rows left
    unscored."""
    rows = unknown.rows
    keep = ~rows[join.src]
    rank = np.cumsum(~rows) - 1
    out = IdJoin(
        rank[join.src[keep]],
        join.dst[keep],
        join.n_missing,
        join.missing_ids,
        join.n_duplicate,
        join.duplicate_ids,
        join.n_unknown,
        join.unknown_ids,
    )
    return out, join.src[~keep]


def build_predictions(
    *,
    dataset: Dataset,
    kind: Kind,
    scores_read: Scores | None,
    texts: pa.Array | None,
    pred_ids: Any,
    join: IdJoin | None,
    path: str,
    fmt: str,
    sha: str | None,
    n_read: int,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mapping: LabelMapping | None,
    unknown: UnknownRows | None = None,
    all_ids: pa.Array | None = None,
) -> Predictions:
    """Predictions from what a reader extracted. With ``unknown`` (a table's rows without
    a prediction), ``join`` and ``all_ids`` cover every row read, while ``scores_read``,
    ``texts`` and ``pred_ids`` hold the other rows only."""
    taxonomy = dataset.taxonomy
    n = len(dataset.ids)
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    if join is None:
        if n_read != n:
            raise PredictionError(
                f"{path}: {n_read} rows of predictions, but the dataset {dataset.name!r} has "
                f"{n} rows; {fmt.upper()} predictions are matched by row order"
                + (" (or add an 'ids' array)" if fmt == "npz" else "")
            )
        join = IdJoin(np.arange(n), np.arange(n), 0, (), 0, (), 0, ())
    elif (join.n_missing or join.n_duplicate or join.n_unknown) and on_mismatch == "error":
        raise mismatch_error(path, join, n, n_read)
    n_null = n_failed = 0
    null_ids: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    n_rows_read = n_read
    if unknown is not None and unknown.rows.any():
        assert all_ids is not None
        join, dropped = without_unknown_rows(join, unknown)
        n_rows_read = n_read - int(unknown.rows.sum())
        was_null = dropped[unknown.null[dropped]]
        was_failed = dropped[unknown.failed[dropped]]
        n_null, n_failed = int(was_null.size), int(was_failed.size)
        null_ids = tuple(str(all_ids[int(i)].as_py()) for i in was_null[:SHOW])
        errors = unknown.errors
        failed = tuple(
            (str(all_ids[int(i)].as_py()), str(errors[int(i)].as_py() if errors else ""))
            for i in was_failed[:SHOW]
        )

    notes: list[str] = []
    out = np.zeros((0, taxonomy.k), dtype=np.float64)
    scored = np.zeros(n, dtype=bool)
    scored[join.dst] = True
    parse_counts: dict[str, int] | None = None
    n_parse_excluded = 0
    graded = True
    n_out = 0
    unknown_cells: np.ndarray | None = None
    if kind == "text":
        from toxeval.parsing import parse_outputs

        assert texts is not None
        used = texts.take(pa.array(join.src)).to_pylist()
        batch = parse_outputs(used, taxonomy, mapping=mapping)
        statuses = np.asarray(batch.statuses)
        parse_counts = {s: int(np.count_nonzero(statuses == s)) for s in STATUSES}
        bad = np.flatnonzero(statuses == "unparseable")
        if bad.size and parse_policy == "error":
            first = int(bad[0])
            reason = batch.reasons[first] or "unparseable"
            raise UnparseableOutputs(
                f"{path}: {bad.size} of {len(used)} outputs are unparseable (first: "
                f"{row_name(pred_ids, int(join.src[first]))}: {reason}); pass "
                f"parse_policy='zeros' or 'exclude' (--parse-policy zeros|exclude) to score "
                f"them as all-zero or leave them out"
            )
        out = np.zeros((n, taxonomy.k), dtype=np.float64)
        out[join.dst] = batch.scores
        cells = verdict_unknown_cells(used, batch.scores, statuses, taxonomy, mapping)
        if cells is not None:
            unknown_cells = np.zeros((n, taxonomy.k), dtype=bool)
            unknown_cells[join.dst] = cells
            cols = [taxonomy.ids[c] for c in np.flatnonzero(cells.any(axis=0))]
            notes.append(
                f"{int(cells.any(axis=1).sum())} outputs are Llama Guard verdicts, read "
                f"through a code mapping that reaches no code for {', '.join(cols)}: those "
                "cells are masked as unknown labels on those rows, not negatives"
            )
        if bad.size and parse_policy == "exclude":
            scored[join.dst[bad]] = False
            n_parse_excluded = int(bad.size)
        if bad.size and parse_policy == "zeros":
            notes.append(
                f"{bad.size} unparseable outputs are scored as all-zero vectors "
                f"(parse_policy='zeros'): each counts as an answer of no category"
            )
        graded = bool(batch.graded)
        n_out = int(np.count_nonzero((batch.scores < 0) | (batch.scores > 1)))
    else:
        assert scores_read is not None
        n_out = validate_scores(scores_read, pred_ids, taxonomy, path)
        out = assemble_scores(scores_read, join, n, n_rows_read)
        graded = kind == "scores" and not all_binary(scores_read)
    if n_out:
        notes.append(
            f"{n_out} scores lie outside [0, 1] (logits?); ranking figures use them as they "
            f"are, thresholded figures compare them with the threshold"
        )
    return Predictions(
        scores=out,
        scored=scored,
        kind=kind,
        source=path,
        format=fmt,
        sha256=sha,
        n_read=n_read,
        on_mismatch=on_mismatch,
        n_missing=join.n_missing,
        n_duplicate=join.n_duplicate,
        n_unknown=join.n_unknown,
        missing_ids=join.missing_ids,
        duplicate_ids=join.duplicate_ids,
        unknown_ids=join.unknown_ids,
        n_out_of_range=n_out,
        parse_policy=parse_policy if kind == "text" else None,
        parse_counts=parse_counts,
        n_parse_excluded=n_parse_excluded,
        graded=graded,
        notes=tuple(notes),
        dataset_sha256=dataset.sha256,
        n_null=n_null,
        null_ids=null_ids,
        n_failed=n_failed,
        failed=failed,
        unknown_cells=unknown_cells,
    )


def verdict_unknown_cells(
    texts: list[Any],
    scores: np.ndarray,
    statuses: np.ndarray,
    taxonomy: Taxonomy,
    mapping: LabelMapping | None,
) -> np.ndarray | None:
    """(len(texts), K) bool: the cells of rows whose output is a Llama Guard verdict
    (``safe``, or ``unsafe`` and codes) that the code mapping read (``mapping``, else the
    built-in one the parser uses) reaches with no code, and that the row does not flag;
    None when there are none. Such a verdict says nothing about those categories."""
    from toxeval.parsing.llama_guard import LG_RE, default_llama_guard_mapping

    m = mapping if mapping is not None else default_llama_guard_mapping(taxonomy)[0]
    if m is None:
        return None
    reach = np.array([i in m.targets for i in taxonomy.ids], dtype=bool)
    if reach.all():
        return None
    verdict = np.array(
        [isinstance(t, str) and LG_RE.match(t) is not None for t in texts], dtype=bool
    )
    verdict &= statuses != "unparseable"
    cells = verdict[:, None] & ~reach[None, :] & (scores == 0.0)
    return cells if cells.any() else None
