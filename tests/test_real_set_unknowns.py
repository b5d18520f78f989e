"""OpenAI's moderation evaluation set (shared public data; skipped when absent) read
onto toxeval-15: a category several OpenAI keys map to (sexual <- S, S3; violence <- V,
H2, V2, ...) is positive when any known key is 1, negative only when every key mapping
to it is known 0, and unknown otherwise. Checked cell by cell against the raw file,
recomputed here from the shipped mapping."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
from toxeval.datasets import load_dataset
from toxeval.taxonomy import load_mapping, load_taxonomy

KEYS = ("S", "H", "V", "HR", "SH", "S3", "H2", "V2")


def test_mapped_labels_are_unknown_unless_every_mapped_key_is_known(shared_data: Path) -> None:
    tax = load_taxonomy("toxeval-15")
    table = load_mapping("openai-moderation").table
    raw = [
        json.loads(line)
        for line in gzip.decompress(
            (shared_data / "openai-moderation" / "samples-1680.jsonl.gz").read_bytes()
        ).splitlines()
        if line.strip()
    ]
    y = np.zeros((len(raw), tax.k), dtype=np.int8)
    known = np.zeros((len(raw), tax.k), dtype=bool)
    for r, row in enumerate(raw):
        for c, cid in enumerate(tax.ids):
            keys = [k for k in KEYS if cid in table[k]]
            values = [row.get(k) for k in keys]
            if any(v == 1 for v in values):
                y[r, c], known[r, c] = 1, True
            elif keys and all(v == 0 for v in values):
                known[r, c] = True
    ds = load_dataset("openai-moderation", data_dir=shared_data, taxonomy="toxeval-15")
    np.testing.assert_array_equal(ds.mask, known)
    np.testing.assert_array_equal(np.where(known, ds.y_true, 0), y)
    # the rows where S is a known 0 but S3 is absent: sexual is unknown there, not 0
    s, s3 = KEYS.index("S"), KEYS.index("S3")
    open_rows = [r for r, row in enumerate(raw) if row.get(KEYS[s]) == 0 and KEYS[s3] not in row]
    assert open_rows and not ds.mask[open_rows, tax.index("sexual")].any()
