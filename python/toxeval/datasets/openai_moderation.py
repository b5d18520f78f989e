"""OpenAI's moderation evaluation set (``samples-1680.jsonl.gz``, 8 categories, public):
read in its own format (``prompt`` plus one 0/1 key per category), recognised by its
content, and mapped onto any taxonomy through the ``openai-moderation`` label mapping.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from toxeval.datasets.labels import LabelReader, build_dataset, dataset_mapping, dataset_taxonomy
from toxeval.datasets.readers import json_lines
from toxeval.datasets.records import records_to_rows
from toxeval.datasets.schema import Dataset, DatasetError, Rule
from toxeval.file_formats import name_format
from toxeval.files import decompress, open_binary, require_file
from toxeval.taxonomy import LabelMapping, Taxonomy

OPENAI_FILE = "samples-1680.jsonl.gz"


OPENAI_KEYS = ("S", "H", "V", "HR", "SH", "S3", "H2", "V2")


def read_openai_moderation(
    path: str | Path,
    *,
    taxonomy: str | Path | Taxonomy = "openai-moderation-8",
) -> Dataset:
    """Read OpenAI's moderation evaluation format (``samples-1680.jsonl.gz``).

    Each row has ``prompt`` and some of the keys S, H, V, HR, SH, S3, H2, V2 with value 0
    or 1; **an absent key means the label is unknown** (mask False). Ids are the 1-based
    line numbers. With a taxonomy other than ``openai-moderation-8`` the keys go through the
    built-in ``openai-moderation`` mapping (which must target that taxonomy).
    """
    p = require_file(path, "OpenAI moderation file", DatasetError)
    tax = dataset_taxonomy(taxonomy)
    mapping = (
        None if tax.name == "openai-moderation-8" else dataset_mapping("openai-moderation", tax)
    )
    labels = LabelReader(tax, mapping)
    data = p.read_bytes()
    body = decompress(p, data, DatasetError)
    if not body.strip():
        raise DatasetError(f"{p}: the file is empty")
    records: list[tuple[int, Any]] = []
    for no, rec in json_lines(body, str(p)):
        if not isinstance(rec, dict) or not isinstance(rec.get("prompt"), str):
            raise DatasetError(f"{p}: line {no}: expected an object with a string 'prompt'")
        lab = {k: v for k, v in rec.items() if k in OPENAI_KEYS}
        extra = [k for k in rec if k != "prompt" and k not in OPENAI_KEYS]
        if extra:
            raise DatasetError(
                f"{p}: line {no}: unknown key(s) {', '.join(map(repr, extra))}; "
                f"expected 'prompt' and some of {', '.join(OPENAI_KEYS)}"
            )
        # every key the row lacks is unknown: list it as null so the mask says so
        obj = {k: lab.get(k) for k in OPENAI_KEYS}
        records.append((no, {"id": str(no), "text": rec["prompt"], "labels": obj}))
    raw = records_to_rows(records, labels, str(p))
    return build_dataset(
        raw,
        name="openai-moderation",
        level="prompt",
        tax=tax,
        labels=labels,
        rule="majority",
        min_annotators=1,
        source=str(p),
        sha=hashlib.sha256(data).hexdigest(),
    )


def is_openai_moderation(path: Path) -> bool:
    """Whether ``path`` is a JSONL file in OpenAI's moderation format, told by its
    content, not its name: its first row has a string ``prompt``, no ``text`` or
    ``id``, and only OpenAI's category keys beside it."""
    fmt = name_format(path)
    if not path.is_file() or fmt is None or fmt.format != "jsonl":
        return False
    try:
        with open_binary(path) as f:
            head = f.readline(1 << 20)
        first = json.loads(head.decode("utf-8-sig"))
    except (OSError, EOFError, ValueError, RecursionError, zlib.error, pa.ArrowException):
        return False  # the dataset reader names what is wrong with the file
    return (
        isinstance(first, dict)
        and isinstance(first.get("prompt"), str)
        and all(k == "prompt" or k in OPENAI_KEYS for k in first)
    )


def check_openai_options(
    path: Path,
    rule: Rule,
    min_annotators: int,
    label_map: str | Path | LabelMapping | None,
) -> None:
    """Reject the options :func:`load_dataset` takes that mean nothing for the OpenAI
    moderation format (rather than ignore them)."""
    if rule != "majority" or min_annotators != 1:
        raise DatasetError(
            f"{path}: the OpenAI moderation format has no per-annotator annotations, so "
            f"rule= (--rule) and min_annotators= (--min-annotators) do not apply (given "
            f"rule={rule!r}, min_annotators={min_annotators!r}); leave them at their "
            f"defaults"
        )
    if label_map is not None:
        raise DatasetError(
            f"{path}: label_map= does not apply to the OpenAI moderation format: its keys "
            f"({', '.join(OPENAI_KEYS)}) are read as taxonomy 'openai-moderation-8', or "
            f"through the built-in 'openai-moderation' mapping for another taxonomy; drop "
            f"label_map"
        )
