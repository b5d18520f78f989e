"""Evaluation datasets: the documented schema, its readers, and the dataset registry.

The parts, each a module of this package:

- :mod:`~toxeval.datasets.schema`: :class:`Dataset`, :class:`DatasetInfo`, :class:`DatasetError`
  and the documented fields (docs/datasets.md);
- :mod:`~toxeval.datasets.labels`: label forms, annotator rules and soft labels;
- :mod:`~toxeval.datasets.readers`: JSONL, CSV and Parquet files, read column-wise
  (:mod:`~toxeval.datasets.tables`) or record by record (:mod:`~toxeval.datasets.records`);
- :mod:`~toxeval.datasets.openai_moderation`: OpenAI's moderation evaluation set;
- :mod:`~toxeval.datasets.registry`: datasets by name, data directories, :func:`load_dataset`.

Ids and :class:`StringColumn` live in :mod:`toxeval.ids`, shared with the predictions.
"""

from __future__ import annotations

from toxeval.datasets.openai_moderation import OPENAI_FILE as OPENAI_FILE
from toxeval.datasets.openai_moderation import OPENAI_KEYS as OPENAI_KEYS
from toxeval.datasets.openai_moderation import read_openai_moderation as read_openai_moderation
from toxeval.datasets.registry import ENV_DATA_DIR as ENV_DATA_DIR
from toxeval.datasets.registry import list_datasets as list_datasets
from toxeval.datasets.registry import load_dataset as load_dataset
from toxeval.datasets.schema import KNOWN_METADATA as KNOWN_METADATA
from toxeval.datasets.schema import SCHEMA_SUMMARY as SCHEMA_SUMMARY
from toxeval.datasets.schema import Dataset as Dataset
from toxeval.datasets.schema import DatasetError as DatasetError
from toxeval.datasets.schema import DatasetInfo as DatasetInfo
from toxeval.datasets.schema import Level as Level
from toxeval.datasets.schema import Rule as Rule
from toxeval.ids import StringColumn as StringColumn

__all__ = [
    "Dataset",
    "DatasetError",
    "DatasetInfo",
    "Rule",
    "StringColumn",
    "list_datasets",
    "load_dataset",
    "read_openai_moderation",
]
