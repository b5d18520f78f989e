"""The dataset schema: the :class:`Dataset` every reader returns, the documented fields
(docs/datasets.md) and the error a file that breaks them raises.

A dataset is N texts (prompts, or prompt + response for response-level benchmarks) with an
(N, K) label matrix in a taxonomy's column order and an (N, K) mask of which labels are
known. Unknown labels never become silent negatives: they are 0 in ``y_true`` and False in
``mask``, and the metrics skip them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from toxeval.taxonomy import Taxonomy

Rule = Literal["majority", "union", "at_least"]


RULES: tuple[Rule, ...] = ("majority", "union", "at_least")


Level = Literal["prompt", "response"]


RESERVED_FIELDS = {"id", "text", "response", "labels", "annotations"}


# Fields documented as metadata (docs/datasets.md): never taken for a misspelt category,
# however close their name is to one. Like every field that is not a label, they are
# ignored, and the report's notes list them.
KNOWN_METADATA = frozenset(
    {
        "source", "split", "lang", "language", "meta", "metadata", "note", "notes",
        "comment", "comments", "url", "date", "model", "prompt_id", "index",
    }
)  # fmt: skip


INDEX_COLUMN = re.compile(r"^(Unnamed: ?\d*|__index_level_\d+__)$")


SCHEMA_SUMMARY = """\
Expected schema (docs/datasets.md): one row per item with
  id          unique string (or integer)
  text        the prompt (or the text that was labelled)
  response    optional; the model response, for response-level datasets
  labels      a list of category ids          ["hate", "violence"]   ([] = benign)
              or an object, null = unknown     {"hate": 1, "violence": null, ...}
              or a K-vector, -1/null = unknown [1, 0, -1, ...]
              (CSV/Parquet: a labels column, or one column per category id with 1/0/empty)
  annotations optional; per-annotator label lists [["hate"], ["hate", "violence"], []]
Files: <name>.jsonl, .jsonl.gz, .csv or .parquet."""


class DatasetError(ValueError):
    """A dataset file is missing or does not follow the schema; says where and what."""


@dataclass(frozen=True)
class Dataset:
    """An evaluation dataset in a taxonomy's column order.

    ``y_true`` is int8 (N, K) with unknown cells 0; ``mask`` is True where the label is
    known. ``soft`` is the fraction of annotators who marked each category (NaN where the
    label is unknown; for rows without per-annotator data it repeats the hard label) and
    ``n_annotators`` is 0 on such rows; both are None when the file has no annotations.

    ``ids``, ``texts`` and ``responses`` are sequences of ``str``: lists, or, from the
    column-wise readers, :class:`StringColumn` (Arrow-backed, turned into Python strings
    only when used). ``ignored_fields`` names the fields (columns, keys) of the file that
    gave no labels and are not schema fields: metadata, or per-category fields when the
    labels came from ``labels`` / ``annotations``. ``columns`` holds those fields' values,
    one pyarrow array of N values per field name (null where a row lacks the field), for
    slicing the figures by them (:mod:`toxeval.slices`); read from the file's own columns,
    with no Python object per row on the column-wise path.
    """

    name: str
    level: Level
    taxonomy: Taxonomy
    ids: Sequence[str]
    texts: Sequence[str]
    responses: Sequence[str] | None
    y_true: np.ndarray
    mask: np.ndarray
    soft: np.ndarray | None
    n_annotators: np.ndarray | None
    source: str
    sha256: str
    ignored_fields: tuple[str, ...] = ()
    columns: Mapping[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def k(self) -> int:
        return self.taxonomy.k


@dataclass(frozen=True)
class DatasetInfo:
    """A registry entry: where toxeval looks for a dataset and what it found."""

    name: str
    level: Level
    description: str
    looked_at: tuple[str, ...]
    path: str | None
