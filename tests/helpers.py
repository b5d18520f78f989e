"""Plain helpers the test modules share (the fixtures are in conftest.py): file writers,
a small synthetic taxonomy and dataset, the ranking-metric names, and where the shared
public data lives.

Test modules import from here (``from helpers import write_jsonl``), never from one
another.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import settings
from toxeval.datasets import Dataset
from toxeval.taxonomy import Category, Taxonomy, load_taxonomy

REPO = Path(__file__).resolve().parents[1]

# Hypothesis's default example budget, against which the profiles of conftest.py scale
# every test's own budget (see ``examples``).
HYPOTHESIS_BASE_EXAMPLES = 100


def examples(n: int) -> int:
    """A test's Hypothesis budget of ``n`` examples (as written for the ``dev`` profile),
    scaled by the active profile: ``dev`` runs ``n``, ``ci`` a quarter of it (at least
    one). A test that sets ``max_examples`` itself overrides the profile, so budgets are
    written as ``max_examples=examples(200)`` to keep following it."""
    scaled = n * settings().max_examples / HYPOTHESIS_BASE_EXAMPLES
    return max(1, round(scaled))


# The label-ranking family of drop-in metrics: 2-D y_true and y_score, one value over
# the rows.
RANKING = [
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "dcg_score",
    "ndcg_score",
]

# Every metric with one value per row, averaged over the rows: the family and one_error.
PER_ROW = [*RANKING, "one_error"]

# File suffix -> pyarrow codec, for every compression toxeval.predictions reads.
CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}


@dataclass
class CliRun:
    """What ``toxeval ARGS`` run in this process gave (the ``cli`` fixture)."""

    returncode: int
    stdout: str
    stderr: str


def jsonl_text(rows: list[Any]) -> str:
    """One line a row: a string row as it is (to write malformed lines), any other row
    as JSON."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def write_jsonl(path: Path, rows: list[Any], *, gz: bool = False) -> Path:
    """``rows`` as a UTF-8 JSONL file (see jsonl_text), gzipped if ``gz``."""
    body = jsonl_text(rows).encode("utf-8")
    path.write_bytes(gzip.compress(body) if gz else body)
    return path


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    """A CSV file written by the csv module (quoting as it needs)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def write_compressed(path: Path, data: bytes) -> Path:
    """``data`` into ``path``, compressed as its (case-insensitive) suffix in CODECS says;
    as it is for any other suffix."""
    sfx = next((s for s in CODECS if path.name.lower().endswith(s)), None)
    if sfx is None:
        path.write_bytes(data)
    else:
        with pa.output_stream(str(path), compression=CODECS[sfx]) as f:
            f.write(data)
    return path


def small_taxonomy(k: int = 4) -> Taxonomy:
    """A taxonomy of ``k`` categories with ids c0, c1, ... (no aliases)."""
    return Taxonomy(
        name=f"test-{k}",
        version="1",
        categories=tuple(
            Category(id=f"c{i}", name=f"Category {i}", description=f"test category {i}")
            for i in range(k)
        ),
    )


def make_dataset(
    y: Any,
    mask: Any = None,
    *,
    taxonomy: Taxonomy | None = None,
    ids: list[str] | None = None,
    soft: Any = None,
    n_annotators: Any = None,
) -> Dataset:
    """A Dataset built in memory from a label matrix: ``mask`` False marks an unknown
    cell (its y_true is stored as 0); ids r0, r1, ... unless given; the taxonomy is
    small_taxonomy(K) unless given."""
    y = np.asarray(y, dtype=np.int8)
    n, k = y.shape
    m = np.ones_like(y, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return Dataset(
        name="test",
        level="prompt",
        taxonomy=taxonomy or small_taxonomy(k),
        ids=ids or [f"r{i}" for i in range(n)],
        texts=[f"text {i}" for i in range(n)],
        responses=None,
        y_true=np.where(m, y, 0).astype(np.int8),
        mask=m,
        soft=soft,
        n_annotators=n_annotators,
        source="test",
        sha256="0" * 64,
    )


def shared_data_dir() -> Path | None:
    """The folder holding ``openai-moderation/samples-1680.jsonl.gz`` (real public data,
    never copied into the repository): under $TOXEVAL_SHARED_DIR/data if set, else in a
    ``shared`` folder beside the checkout or one level up; None when absent."""
    env = os.environ.get("TOXEVAL_SHARED_DIR")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO.parent.parent / "shared"]
    for c in candidates:
        if (c / "data" / "openai-moderation" / "samples-1680.jsonl.gz").is_file():
            return c / "data"
    return None


def write_scored_pair(
    folder: Path, dump_pad: dict[int, str] | None = None, dataset_pad: dict[int, str] | None = None
) -> tuple[Path, Path]:
    """``folder/dump.jsonl`` (six rows of toxeval-15 scores) and ``folder/ds.jsonl`` (their
    labels); ``dump_pad[i]`` / ``dataset_pad[i]`` is spliced into row i as a last field
    ``"pad"`` (raw JSON text, to write lines no JSON encoder would)."""
    categories = load_taxonomy("toxeval-15").ids
    rng = np.random.default_rng(3)
    ds = [{"id": i, "text": "t", "labels": [categories[i % 3]]} for i in range(6)]
    dump = [
        {"id": i, "scores": dict(zip(categories, rng.random(15).tolist(), strict=True))}
        for i in range(6)
    ]
    for path, rows, pads in (
        (folder / "ds.jsonl", ds, dataset_pad),
        (folder / "dump.jsonl", dump, dump_pad),
    ):
        lines = [json.dumps(r) for r in rows]
        for i, pad in (pads or {}).items():
            lines[i] = lines[i][:-1] + f', "pad": {pad}}}'
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "dump.jsonl", folder / "ds.jsonl"


def named_part(r: Any) -> tuple[str, np.ndarray]:
    """What a parsed answer (a ``ParseResult``) says about the categories it names.

    An answer that speaks only for some categories ("hate: no", a JSON object, a table)
    leaves the others unknown: NaN scores, status ``partial``, a reason saying "no value
    for". This checks that, then returns the status and scores the named categories give
    on their own: ``ok`` / ``empty`` (``partial`` if a name was not recognised) and the
    scores with the silent categories at 0, so that tests of how a value is read do not
    have to list the silent categories."""
    s = np.asarray(r.scores)
    silent = np.isnan(s)
    if not silent.any():
        return str(r.status), s
    assert r.status == "partial" and r.reason and "no value for" in r.reason, r
    filled = np.where(silent, 0.0, s)
    if r.unknown:
        return "partial", filled
    return ("ok" if filled.any() else "empty"), filled


def either_reader(read: Any, path: Path, env: str) -> tuple[Any, Any]:
    """``read(path)`` as a user gets it with the native readers allowed and with
    ``env=pyarrow`` (every file to pyarrow): each a table, or ``(type, message)`` of the
    error raised. A prediction reader's contract is that the two are equal."""

    def once() -> Any:
        try:
            return read(path)
        except Exception as e:  # the error a user would see, compared as such
            return (type(e), str(e))

    before = os.environ.pop(env, None)
    try:
        native = once()
        os.environ[env] = "pyarrow"
        general = once()
    finally:
        os.environ.pop(env, None)
        if before is not None:
            os.environ[env] = before
    return native, general


def same_read(a: Any, b: Any) -> bool:
    """Two :func:`either_reader` results are the same: equal tables with equal
    schemas, or the same error type and message."""
    if isinstance(a, pa.Table) and isinstance(b, pa.Table):
        # repr of the rows: NaN equals NaN there (Table.equals says NaN != NaN), and a
        # float's repr is exact
        return bool(
            a.schema == b.schema and (a.equals(b) or repr(a.to_pylist()) == repr(b.to_pylist()))
        )
    return bool(a == b)
