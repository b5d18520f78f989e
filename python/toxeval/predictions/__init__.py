"""Prediction dumps: read, validate and join model predictions to a dataset.

A dump holds, per item, either per-category scores (an object ``{"hate": 0.9, ...}``,
one column per category id, or a K-vector), a set of labels (``labels: ["hate"]``), or
the model's raw text (``output`` or ``text``, turned into a vector by
:func:`toxeval.parsing.parse_outputs`). It is read from JSONL (``.jsonl``, ``.ndjson``),
CSV, Parquet (matched to the dataset by the ``id`` column), or NPY / NPZ (matched by row
order, or by an ``ids`` array in an NPZ). JSONL and CSV may be compressed (``.gz``,
``.bz2``, ``.zst``, ``.lz4``: pyarrow's codecs); a compressed Parquet, NPY or NPZ file is
rejected.

Everything on the score path is columnar: JSONL score dumps of the common forms are read
by a native parallel reader (:mod:`~toxeval.predictions.native_jsonl`), every other file
by pyarrow (with an explicit schema for JSONL, built from the first line), ids are joined in Arrow / numpy and scores move as
numpy arrays, so a million rows load without a Python object per row. Raw text is the
exception: each output is parsed as a string. The join takes the cheapest exact path:
ids already in dataset order (one array comparison); the same ids shuffled (both sides
sorted by a 64-bit hash, every pair confirmed byte for byte); anything else, or a hash
collision, through ``pyarrow.compute.index_in``. Score columns are copied once, chunk by
chunk, into a Fortran-order (N, K) matrix in dataset row order.

Nothing is dropped silently. Ids of the dataset without a prediction (*missing*), ids
given twice (*duplicate*) and ids not in the dataset (*unknown*) are counted; with
``on_mismatch="error"`` (the default) any of them raises :class:`PredictionError`, with
``"drop"`` later duplicates and unknown rows are dropped and missing dataset rows are
left out of scoring; the counts and the first few ids go into the report either way.

The parts, each a module of this package: :mod:`~toxeval.predictions.schema` (the
:class:`Predictions` result, errors, formats and policies),
:mod:`~toxeval.predictions.readers` (files; ``read_jsonl_table`` picks the JSONL reader),
:mod:`~toxeval.predictions.native_jsonl` (the native JSONL reader),
:mod:`~toxeval.predictions.arrays` (NPY / NPZ), :mod:`~toxeval.predictions.forms` (scores,
labels, raw text),
:mod:`~toxeval.predictions.align` (dataset row order, mismatch policy, unscored rows),
:mod:`~toxeval.predictions.load` (:func:`read_predictions`) and
:mod:`~toxeval.predictions.frames` (DataFrames, arrays, raw outputs in memory).
"""

from __future__ import annotations

from toxeval.files import file_sha256 as file_sha256
from toxeval.predictions.forms import Scores as Scores
from toxeval.predictions.frames import check_raw_outputs as check_raw_outputs
from toxeval.predictions.frames import is_frame as is_frame
from toxeval.predictions.frames import predictions_from_array as predictions_from_array
from toxeval.predictions.frames import predictions_from_frame as predictions_from_frame
from toxeval.predictions.frames import predictions_from_texts as predictions_from_texts
from toxeval.predictions.load import read_predictions as read_predictions
from toxeval.predictions.readers import detect_format as detect_format
from toxeval.predictions.schema import FORMATS as FORMATS
from toxeval.predictions.schema import MISMATCH_POLICIES as MISMATCH_POLICIES
from toxeval.predictions.schema import PARSE_POLICIES as PARSE_POLICIES
from toxeval.predictions.schema import STATUSES as STATUSES
from toxeval.predictions.schema import Format as Format
from toxeval.predictions.schema import Kind as Kind
from toxeval.predictions.schema import OnMismatch as OnMismatch
from toxeval.predictions.schema import ParsePolicy as ParsePolicy
from toxeval.predictions.schema import PredictionError as PredictionError
from toxeval.predictions.schema import Predictions as Predictions

__all__ = [
    "FORMATS",
    "MISMATCH_POLICIES",
    "PARSE_POLICIES",
    "Format",
    "OnMismatch",
    "ParsePolicy",
    "PredictionError",
    "Predictions",
    "detect_format",
    "is_frame",
    "predictions_from_array",
    "predictions_from_frame",
    "predictions_from_texts",
    "read_predictions",
]
