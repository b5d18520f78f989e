"""``toxeval score`` of a JSONL, CSV or Parquet dump never imports pandas.

pyarrow imports pandas (0.2-0.4 s) the first time ``pa.array(...)``, ``Array.to_numpy()``
or ``np.asarray(arrow_array)`` runs; the score path converts through
:mod:`toxeval.arrow_numpy` instead. Checked in a fresh interpreter running the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from toxeval.taxonomy import DEFAULT_TAXONOMY, load_taxonomy  # noqa: E402

CATS = load_taxonomy(DEFAULT_TAXONOMY).ids

PROBE = (
    "import sys\n"
    "from toxeval.cli.entry import main\n"
    "code = main(sys.argv[1:])\n"
    "print('PANDAS' if 'pandas' in sys.modules else 'NO PANDAS', code)\n"
)


def _files(tmp: Path) -> tuple[Path, Path, Path, Path]:
    rows = [
        {"id": f"r{i}", "text": f"t {i}", "labels": [CATS[i % 3]] if i % 4 else []}
        for i in range(40)
    ]
    ds_jsonl = tmp / "d.jsonl"
    ds_jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ds_parquet = tmp / "d.parquet"
    pq.write_table(
        pa.table({k: [r[k] for r in rows] for k in ("id", "text", "labels")}), ds_parquet
    )
    scores = [{c: ((i * 7 + j) % 10) / 10 for j, c in enumerate(CATS)} for i in range(40)]
    dump_jsonl = tmp / "p.jsonl"
    dump_jsonl.write_text(
        "".join(json.dumps({"id": f"r{i}", "scores": s}) + "\n" for i, s in enumerate(scores)),
        encoding="utf-8",
    )
    dump_parquet = tmp / "p.parquet"
    pq.write_table(
        pa.table({"id": [f"r{i}" for i in range(40)], **{c: [s[c] for s in scores] for c in CATS}}),
        dump_parquet,
    )
    dump_csv = tmp / "p.csv"
    dump_csv.write_text(
        "id," + ",".join(CATS) + "\n"
        + "".join(f"r{i}," + ",".join(str(s[c]) for c in CATS) + "\n" for i, s in enumerate(scores)),
        encoding="utf-8",
    )  # fmt: skip
    return ds_jsonl, ds_parquet, dump_jsonl, dump_parquet


def _score(tmp: Path, dump: Path, dataset: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "score", str(dump), "--dataset", str(dataset),
         "--out", str(tmp / f"out-{dump.suffix}-{dataset.suffix}"), "--bootstrap", "0", "--quiet"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("dataset", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    ("dump", "env"),
    [
        ("parquet", {}),
        ("jsonl", {"TOXEVAL_JSONL_READER": "pyarrow"}),
        ("jsonl", {}),
        ("csv", {}),
    ],
)
def test_score_does_not_import_pandas(
    tmp_path: Path, dump: str, env: dict[str, str], dataset: str
) -> None:
    ds_jsonl, ds_parquet, dump_jsonl, dump_parquet = _files(tmp_path)
    ds = ds_jsonl if dataset == "jsonl" else ds_parquet
    path = {"jsonl": dump_jsonl, "parquet": dump_parquet, "csv": tmp_path / "p.csv"}[dump]
    assert _score(tmp_path, path, ds, env) == "NO PANDAS 0"


def test_probe_sees_pandas(tmp_path: Path) -> None:
    """The probe can fail: an Arrow conversion through numpy does import pandas."""
    pytest.importorskip("pandas")
    probe = "import sys, numpy as np, pyarrow as pa\nnp.asarray(pa.array([1]))\nprint('pandas' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True"
