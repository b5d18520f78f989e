"""What :func:`toxeval.score` and :func:`toxeval.evaluate` make of their prediction and
mapping arguments before scoring: a masked array refused, a list of raw outputs checked,
the notes on options a dump had no use for, and how a mapping is named and recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.predictions import PredictionError, Predictions, check_raw_outputs
from toxeval.taxonomy import LabelMapping

__all__ = [
    "mapping_name",
    "mapping_record",
    "note_unused_by_dump",
    "output_list",
    "unmasked_scores",
]


def mapping_record(mapping: str | Path | LabelMapping | None) -> dict[str, Any] | None:
    """The ``inputs.mapping`` record of a mapping given by path or built-in name."""
    from toxeval.files import builtin_record, file_record

    if not isinstance(mapping, (str, Path)):
        return None
    if Path(mapping).is_file():
        return file_record(mapping)
    return builtin_record("mappings", f"{mapping}.toml")


def unmasked_scores(scores: np.ndarray) -> np.ndarray:
    """The score matrix given to :func:`score`, with a NumPy masked array rejected when
    it masks any entry: ``np.asarray`` would read the values under its mask, scoring
    what the caller marked as missing. A masked array without masked entries is its data.
    """
    if isinstance(scores, np.ma.MaskedArray):
        if np.ma.getmaskarray(scores).any():
            raise PredictionError(
                "masked arrays are not supported as scores: the masked entries would be "
                "scored with the values under the mask. Pass a plain array with a score "
                "for every cell (a prediction dump with the rows that have predictions "
                "leaves the others unscored)"
            )
        data: np.ndarray = np.ma.getdata(scores)
        return data
    return scores


def note_unused_by_dump(
    preds: Predictions, parse_policy: str, mapping: str | Path | LabelMapping | None
) -> Predictions:
    """``preds`` with a note for each option the dump turned out to have no use for
    (known only once it is read): ``parse_policy`` applies to raw text, ``mapping`` to
    label lists and raw text. Not an error, so that one command line can score a mix of
    dumps; the report says so, and ``result.config`` records ``None`` for it."""
    unused = []
    if parse_policy != "exclude" and preds.kind != "text":
        unused.append(f"parse_policy={parse_policy!r}")
    if mapping is not None and preds.kind == "scores":
        unused.append(f"mapping={mapping_name(mapping)!r}")
    if not unused:
        return preds
    note = f"{' and '.join(unused)} not used: the predictions are {preds.kind}, not raw text" + (
        " or label lists" if preds.kind == "scores" else ""
    )
    return dataclasses.replace(preds, notes=(*preds.notes, note))


def output_list(predictions: object) -> list[str]:
    """``predictions`` as a list of raw outputs, or a TypeError saying what is accepted."""
    accepted = (
        "predictions must be a file path, an (N, K) numpy array of scores, a DataFrame or "
        "Arrow table of scores, a sequence of N raw model outputs (str) or a Predictions"
    )
    if isinstance(predictions, (bytes, dict)) or not isinstance(predictions, Iterable):
        raise TypeError(f"{accepted}; got {type(predictions).__name__}")
    texts = list(predictions)
    check_raw_outputs(texts, f"{accepted}; got a sequence that is none of these")
    return texts


def mapping_name(mapping: str | Path | LabelMapping | None) -> str | None:
    if mapping is None:
        return None
    if isinstance(mapping, LabelMapping):
        return mapping.name
    return str(mapping)
