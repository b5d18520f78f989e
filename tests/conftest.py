"""Fixtures shared by the test modules: small datasets and taxonomy files on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# A three-category taxonomy whose first category has a name and an alias, so that
# columns and keys can name one category in several ways.
ALIAS_TAXONOMY = """name = "alias-3"
version = "1"
[[category]]
id = "alpha"
name = "Alpha"
aliases = ["first"]
[[category]]
id = "beta"
name = "Beta"
[[category]]
id = "gamma"
name = "Gamma"
"""

# Six rows with every category positive somewhere and one unknown label (row r3, gamma).
SMALL_ROWS: list[dict[str, Any]] = [
    {"id": "r1", "text": "one", "labels": {"alpha": 1, "beta": 0, "gamma": 0}},
    {"id": "r2", "text": "two", "labels": {"alpha": 0, "beta": 1, "gamma": 0}},
    {"id": "r3", "text": "three", "labels": {"alpha": 1, "beta": 1, "gamma": None}},
    {"id": "r4", "text": "four", "labels": {"alpha": 0, "beta": 0, "gamma": 1}},
    {"id": "r5", "text": "five", "labels": {"alpha": 0, "beta": 0, "gamma": 0}},
    {"id": "r6", "text": "six", "labels": {"alpha": 1, "beta": 0, "gamma": 1}},
]


@pytest.fixture
def alias_taxonomy_file(tmp_path: Path) -> Path:
    """A TOML taxonomy file: ids alpha (name Alpha, alias first), beta, gamma."""
    p = tmp_path / "alias-3.toml"
    p.write_text(ALIAS_TAXONOMY, encoding="utf-8")
    return p


@pytest.fixture
def small_dataset_file(tmp_path: Path) -> Path:
    """SMALL_ROWS as a JSONL dataset file in the alias-3 taxonomy."""
    p = tmp_path / "small.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in SMALL_ROWS), encoding="utf-8")
    return p


@pytest.fixture
def small_dataset(small_dataset_file: Path, alias_taxonomy_file: Path) -> Any:
    """SMALL_ROWS loaded as a Dataset (6 rows, K=3, one unknown cell)."""
    from toxeval.datasets import load_dataset

    return load_dataset(small_dataset_file, taxonomy=alias_taxonomy_file)
