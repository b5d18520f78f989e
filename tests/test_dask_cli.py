"""``toxeval score --dask-scheduler/--dask-local`` against a real local cluster: the
report equals the in-memory one (counts exactly, floats to 1e-12); mismatched ids,
an unreachable scheduler and one lost mid-computation give one-line errors (exit 2)
within the timeout. Skipped where Dask is not installed."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from toxeval.scoring import score  # noqa: E402
from toxeval.taxonomy import load_taxonomy  # noqa: E402

TAX = load_taxonomy("toxeval-15")


def _write(
    tmp: Path, n: int, seed: int = 0, *, continuous: bool = False
) -> tuple[Path, Path, Path]:
    """A Parquet dataset (labels with unknown cells), the predictions as one file and
    as a directory of shards (one of them empty); scores in steps of 0.05, or
    continuous (nearly every score distinct)."""
    rng = np.random.default_rng(seed)
    k = TAX.k
    y = (rng.random((n, k)) < 0.25).astype(np.int8)
    y[:, 3] = 0
    known = rng.random((n, k)) < 0.85
    known[::17] = False
    s = rng.random((n, k)).astype(np.float32)
    if not continuous:
        s = (np.floor(s * 20) / 20).astype(np.float32)
    ids = np.array([f"item-{i:05d}" for i in range(n)])
    labels = pa.array(
        [
            [int(v) if kn else None for v, kn in zip(yr, kr, strict=True)]
            for yr, kr in zip(y, known, strict=True)
        ],
        pa.list_(pa.int8()),
    )
    ds = tmp / "dataset.parquet"
    pq.write_table(pa.table({"id": ids, "text": [f"t {i}" for i in ids], "labels": labels}), ds)
    order = rng.permutation(n)

    def table(rows: Any) -> pa.Table:
        return pa.table({"id": ids[rows], **{c: s[rows, j] for j, c in enumerate(TAX.ids)}})

    flat = tmp / "predictions.parquet"
    pq.write_table(table(order), flat)
    shards = tmp / "shards"
    shards.mkdir()
    for i, part in enumerate(np.array_split(order, 4)):
        pq.write_table(table(part), shards / f"part-{i}.parquet")
    pq.write_table(table(order[:0]), shards / "part-9-empty.parquet")
    return ds, flat, shards


def _close(a: Any, b: Any, what: str) -> None:
    if isinstance(b, float) and math.isnan(b):
        assert a is None or math.isnan(a), what
    else:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), what


@pytest.mark.parametrize(
    ("continuous", "extra", "path"),
    [
        (False, [], "tree merge"),
        (True, ["--memory-limit", "64KiB"], "range partitions"),
    ],
)
def test_score_on_the_cluster_equals_in_memory(
    tmp_path: Path, dask_cluster: Any, cli: Any, continuous: bool, extra: list[str], path: str
) -> None:
    """Equal to the in-memory report on the tree merge (rounded scores) and on range
    partitions (continuous scores over the memory target: several passes)."""
    ds, flat, shards = _write(tmp_path, 900 if not continuous else 2500, continuous=continuous)
    want = score(flat, ds, bootstrap=0)
    out = tmp_path / "out"
    run = cli(
        "score",
        str(shards),
        "--dataset",
        str(ds),
        "--dask-scheduler",
        dask_cluster.scheduler_address,
        "--out",
        str(out),
        "--quiet",
        *extra,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads((out / "results.json").read_text())
    for key in (
        "scored",
        "excluded",
        "missing_prediction",
        "unknown_ids_dropped",
        "known_cells",
        "unknown_cells",
        "rows_without_known_labels",
    ):
        assert got["counts"][key] == want.counts[key], key
    for key, v in want.figures.items():
        if key != "intervals":
            _close(got["figures"][key], v, key)
    for g, w in zip(got["per_category"], want.per_category, strict=True):
        assert (g["id"], g["support"], g["negatives"], g["unknown"]) == (
            w["id"],
            w["support"],
            w["negatives"],
            w["unknown"],
        )
        for key in ("ap", "roc_auc", "f1"):
            _close(g[key], w[key], f"{w['id']} {key}")
    assert got["config"]["dask"]["engine"] == "dask"
    states = got["config"]["dask"]["metric_states"]
    assert states["path"] == path
    if continuous:
        assert states["passes"] > 1


def test_mismatched_ids_are_an_error_unless_dropped(
    tmp_path: Path, dask_cluster: Any, cli: Any
) -> None:
    ds, flat, _ = _write(tmp_path, 300)
    t = pq.read_table(flat)
    part = tmp_path / "part.parquet"
    pq.write_table(t.slice(0, 200), part)
    args = [
        "score",
        str(part),
        "--dataset",
        str(ds),
        "--dask-scheduler",
        dask_cluster.scheduler_address,
        "--quiet",
    ]
    run = cli(*args)
    assert run.returncode == 2 and "100 dataset rows have no" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    run = cli(*args, "--on-mismatch", "drop", "--out", str(tmp_path / "o"))
    assert run.returncode == 0, run.stderr
    got = json.loads((tmp_path / "o" / "results.json").read_text())
    assert got["counts"]["scored"] == 200 and got["counts"]["missing_prediction"] == 100


def test_dask_local_starts_its_own_cluster(tmp_path: Path) -> None:
    ds, flat, _ = _write(tmp_path, 200)
    out = tmp_path / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "toxeval",
            "score",
            str(flat),
            "--dataset",
            str(ds),
            "--dask-local",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    got = json.loads((out / "results.json").read_text())
    _close(got["figures"]["map"], score(flat, ds, bootstrap=0).figures["map"], "map")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_scheduler_fails_within_the_timeout(tmp_path: Path, cli: Any) -> None:
    ds, flat, _ = _write(tmp_path, 50)
    started = time.monotonic()
    run = cli(
        "score",
        str(flat),
        "--dataset",
        str(ds),
        "--dask-scheduler",
        f"tcp://127.0.0.1:{_free_port()}",
        "--dask-timeout",
        "3",
        "--quiet",
    )
    assert run.returncode == 2
    assert "cannot reach the Dask scheduler" in run.stderr
    assert time.monotonic() - started < 60


def test_a_bad_memory_limit_is_refused_before_any_work(tmp_path: Path, cli: Any) -> None:
    ds, flat, _ = _write(tmp_path, 20)
    run = cli(
        "score", str(flat), "--dataset", str(ds), "--dask-local", "1", "--memory-limit", "lots"
    )
    assert run.returncode == 2
    assert "--memory-limit" in run.stderr and "is not a size" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_scheduler_lost_mid_computation(tmp_path: Path) -> None:
    """A scheduler process killed while it runs the join: a DaskUnavailable error
    within the timeout, not a hang."""
    from toxeval.dask.score import DaskUnavailable, connect, score_on_dask
    from toxeval.datasets import load_dataset

    ds_path, flat, _ = _write(tmp_path, 400)
    port = _free_port()
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "False"}
    sched = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
            "--no-dashboard",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            f"tcp://127.0.0.1:{port}",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--host",
            "127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:

        def kill(futures: Any) -> None:
            os.kill(sched.pid, signal.SIGKILL)

        with pytest.raises(DaskUnavailable, match="lost the Dask scheduler"):
            with connect(scheduler=f"tcp://127.0.0.1:{port}", timeout=30) as client:
                client.wait_for_workers(1, timeout=60)
                started = time.monotonic()
                try:
                    score_on_dask(client, flat, load_dataset(ds_path), wait=kill)
                finally:
                    assert time.monotonic() - started < 90
    finally:
        for p in (worker, sched):
            p.kill()
            p.wait(timeout=30)


def test_a_timeout_under_11_s_reaches_a_listening_peer_and_fails_cleanly() -> None:
    # A peer that accepts the TCP connection but never speaks Dask's protocol. With a
    # timeout under 11 s, distributed's keepalive setup asserted ("Timeout too low", an
    # internal error even against a working cluster). With any timeout, distributed
    # waited for the peer's handshake with no limit: Client() hung forever.
    from toxeval.dask.score import DaskUnavailable, connect

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    started = time.monotonic()
    try:
        with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler"):
            with connect(scheduler=f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=2):
                pass
    finally:
        server.close()
    assert time.monotonic() - started < 30
