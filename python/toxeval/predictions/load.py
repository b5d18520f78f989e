""":func:`read_predictions`: a prediction file read (:mod:`~toxeval.predictions.readers`),
its form found (:mod:`~toxeval.predictions.forms`) and joined to a dataset
(:mod:`~toxeval.predictions.align`). The file's sha256 is computed on a thread while it
is parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from toxeval.files import BackgroundSha256, file_sha256, require_file
from toxeval.ids import join_ids
from toxeval.predictions.align import build_predictions, check_one_form, unknown_rows
from toxeval.predictions.arrays import read_numpy_arrays
from toxeval.predictions.forms import extract_scores
from toxeval.predictions.readers import (
    prediction_format,
    read_csv_table,
    read_jsonl_table,
    read_parquet_table,
)
from toxeval.predictions.schema import (
    FORMATS,
    MISMATCH_POLICIES,
    PARSE_POLICIES,
    Format,
    Kind,
    OnMismatch,
    ParsePolicy,
    PredictionError,
    Predictions,
    check_choice,
)
from toxeval.taxonomy import LabelMapping, load_mapping

if TYPE_CHECKING:
    from toxeval.datasets import Dataset


def read_predictions(
    path: str | Path,
    dataset: Dataset,
    *,
    format: Format = "auto",
    on_mismatch: OnMismatch = "error",
    parse_policy: ParsePolicy = "exclude",
    mapping: str | Path | LabelMapping | None = None,
) -> Predictions:
    """Read a prediction dump and align it to ``dataset``'s rows.

    ``format``: ``auto`` (from the extension), ``jsonl``, ``csv``, ``parquet``, ``npy``,
    ``npz``; a JSONL or CSV file may be compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4``).
    ``on_mismatch``: ``error`` or ``drop`` (see the module docstring).
    ``parse_policy`` (raw text only) decides what happens to unparseable outputs:
    ``exclude`` (the default) leaves them out and counts them, ``zeros`` scores them as
    all-zero vectors (a note in the report says how many), ``error`` raises :class:`PredictionError` (also an
    :class:`~toxeval.parsing.UnparseableOutputError`). ``mapping`` translates other
    schemes' codes (e.g. Llama Guard ``S1``) in label lists and raw text. Raises
    :class:`PredictionError` on any bad input, ``ValueError`` for an unknown ``format``,
    ``on_mismatch`` or ``parse_policy``.
    """
    check_choice("format", format, FORMATS, "--format")
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    p = require_file(path, "predictions file", PredictionError, FileNotFoundError)
    fmt = prediction_format(p, None if format == "auto" else format).format
    mp = load_mapping(mapping) if isinstance(mapping, (str, Path)) else mapping
    src = str(p)
    if fmt in ("npy", "npz"):
        sha = file_sha256(p)
        arr, ids = read_numpy_arrays(p, fmt)
        return array_predictions(
            arr,
            ids,
            dataset,
            src,
            fmt=fmt,
            sha=sha,
            on_mismatch=on_mismatch,
            parse_policy=parse_policy,
            mapping=mp,
        )
    readers = {"jsonl": read_jsonl_table, "csv": read_csv_table, "parquet": read_parquet_table}
    hashing = BackgroundSha256(p)  # overlaps with parsing; its errors come first
    try:
        table = readers[fmt](p)
    except BaseException:
        hashing.result()
        raise
    sha = hashing.result()
    try:
        return table_predictions(table, dataset, src, fmt, sha, on_mismatch, parse_policy, mp)
    except (pa.ArrowException, UnicodeError) as e:
        # a form of malformed input no check above anticipated: still an input error
        # naming the file, never an internal one
        raise PredictionError(f"{src}: cannot read the predictions: {e}") from None


def table_predictions(
    table: pa.Table,
    dataset: Dataset,
    src: str,
    fmt: str,
    sha: str | None,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mp: LabelMapping | None,
) -> Predictions:
    if table.num_rows == 0:
        raise PredictionError(f"{src}: empty file (no predictions)")
    if "id" not in table.column_names:
        raise PredictionError(
            f"{src}: no 'id' column to match predictions to the dataset "
            f"(columns: {', '.join(table.column_names)})"
        )
    all_ids = table.column("id").combine_chunks()
    join = join_ids(all_ids, dataset.ids, src, PredictionError)
    unknown = unknown_rows(table, dataset.taxonomy)
    check_one_form(table, dataset.taxonomy, unknown, src)
    known = table
    if unknown.rows.any():
        known = table.filter(pa.array(~unknown.rows))
    kind: Kind
    if known.num_rows:
        kind, scores, text_col = extract_scores(known, dataset.taxonomy, mp, src)
    else:  # every row null or failed: nothing to extract, every row unscored
        kind, scores, text_col = "scores", np.zeros((0, dataset.taxonomy.k)), None
    texts = known.column(text_col).combine_chunks() if text_col else None
    if texts is not None and not pa.types.is_string(texts.type):
        raise PredictionError(f"{src}: column {text_col!r} is {texts.type}, expected text")
    return build_predictions(
        dataset=dataset,
        kind=kind,
        scores_read=scores,
        texts=texts,
        pred_ids=known.column("id").combine_chunks(),
        all_ids=all_ids,
        unknown=unknown,
        join=join,
        path=src,
        fmt=fmt,
        sha=sha,
        n_read=table.num_rows,
        on_mismatch=on_mismatch,
        parse_policy=parse_policy,
        mapping=mp,
    )


def array_predictions(
    arr: np.ndarray,
    ids: np.ndarray | None,
    dataset: Dataset,
    src: str,
    *,
    fmt: str,
    sha: str | None,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mapping: LabelMapping | None,
) -> Predictions:
    taxonomy = dataset.taxonomy
    if arr.dtype.kind not in "biuf":
        raise PredictionError(f"{src}: array dtype {arr.dtype} is not numeric")
    if arr.ndim != 2:
        raise PredictionError(f"{src}: scores must be a 2-D (N, K) array, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise PredictionError(f"{src}: empty file (no predictions)")
    if arr.shape[1] != taxonomy.k:
        raise PredictionError(
            f"{src}: score matrix has {arr.shape[1]} columns, expected K={taxonomy.k} for "
            f"taxonomy {taxonomy.name!r} ({', '.join(taxonomy.ids)})"
        )
    scores = np.asarray(arr, dtype=np.float64)
    join = None
    pred_ids: Any = None
    if ids is not None:
        if ids.ndim != 1 or len(ids) != len(arr):
            raise PredictionError(
                f"{src}: 'ids' has shape {ids.shape}, expected ({len(arr)},) like the scores"
            )
        pred_ids = id_strings(ids, src)
        join = join_ids(pred_ids, dataset.ids, src, PredictionError)
    kind: Kind = "labels" if arr.dtype.kind == "b" else "scores"
    return build_predictions(
        dataset=dataset,
        kind=kind,
        scores_read=scores,
        texts=None,
        pred_ids=pred_ids,
        join=join,
        path=src,
        fmt=fmt,
        sha=sha,
        n_read=len(arr),
        on_mismatch=on_mismatch,
        parse_policy=parse_policy,
        mapping=mapping,
    )


def id_strings(ids: np.ndarray, src: str) -> pa.Array:
    """An NPZ / in-memory id array as a pyarrow string array: str, UTF-8 bytes or
    integers; anything else (None, floats, mixed objects) is an error, not a guess."""
    kind = ids.dtype.kind
    if kind == "U":
        return pa.array(ids.astype(str), type=pa.string())
    if kind in "iu":
        return pa.array(ids).cast(pa.string())
    if kind == "S":
        out = []
        for i, v in enumerate(ids.tolist()):
            try:
                out.append(v.decode("utf-8"))
            except UnicodeDecodeError:
                raise PredictionError(f"{src}: 'ids'[{i}] {v!r} is not UTF-8 text") from None
        return pa.array(out, type=pa.string())
    if kind == "O":
        vals = ids.tolist()
        for i, v in enumerate(vals):
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise PredictionError(
                    f"{src}: 'ids'[{i}] is {v!r} ({type(v).__name__}); ids must be strings "
                    "or integers"
                )
        return pa.array([str(v) for v in vals], type=pa.string())
    raise PredictionError(f"{src}: 'ids' has dtype {ids.dtype}; ids must be strings or integers")
