"""``toxeval score`` on a Dask cluster: the dataset is read by toxeval's own readers on
the client (every label rule applies) and scattered to the workers as partitions of
(id, labels, mask); the predictions are read by Dask from Parquet (a file or a
directory of shards, an ``id`` column and one float column per category); Dask
joins the two on ``id`` (``dask.dataframe`` merge: a hash shuffle of both sides) and
the joined partitions feed the report's mergeable states: a first pass gives the
counts, the report's additive totals and a sample of the scores; then AP and ROC AUC
come from a tree merge of runs where they fit a worker (few distinct scores, small
inputs), else from range partitions by score (``toxeval.dask.ranges``: the join is
recomputed once per pass over the ranges, so no worker holds a label's runs). Only
states and counts come back to the client.

The client waits at most ``timeout`` seconds for a scheduler that stops answering
(``distributed.Client(timeout=...)`` and the comm timeouts): a lost scheduler is a
:class:`DaskUnavailable` error, never a hang.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from toxeval.dask.budget import state_budget
from toxeval.dask.ranges import (
    plan_ranges,
    ranged_report,
    survey_graph,
    tree_suffices,
)
from toxeval.dask.states import report_block, report_merge
from toxeval.dask.tree import task, tree_reduce
from toxeval.datasets import Dataset
from toxeval.predictions import PredictionError
from toxeval.scoring.figures import report_figures
from toxeval.scoring.result import EvaluationResult, Progress
from toxeval.scoring.streamed_result import streamed_counts, streamed_result
from toxeval.streaming import MultilabelAccumulator

__all__ = ["DaskUnavailable", "connect", "score_on_dask"]

DATASET_ROWS_PER_PARTITION = 1 << 20


class DaskUnavailable(RuntimeError):
    """The scheduler cannot be reached, or stopped answering, within the timeout."""


# The smallest kernel-level TCP timeout distributed accepts (10 keepalive probes + 1).
TCP_TIMEOUT_MIN = 11.0


@contextmanager
def connect(
    *, scheduler: str | None = None, local_workers: int | None = None, timeout: float = 30.0
) -> Iterator[Any]:
    """A ``distributed.Client`` of ``scheduler`` (an address) or of a new
    ``LocalCluster`` of ``local_workers`` one-thread worker processes on 127.0.0.1,
    closed on exit. ``timeout``: seconds to connect, and to wait for a scheduler that
    stops answering before giving up."""
    import distributed

    if (scheduler is None) == (local_workers is None):
        raise ValueError("give a scheduler address or a number of local workers (one of them)")
    settings = {
        "distributed.comm.timeouts.connect": f"{timeout}s",
        # distributed spreads this over 10 kernel keepalive probes of an open
        # connection and asserts it is at least 11 s (else every connection that
        # opens fails with "Timeout too low"); the connect timeout keeps `timeout`.
        "distributed.comm.timeouts.tcp": f"{max(timeout, TCP_TIMEOUT_MIN)}s",
    }
    with dask.config.set(settings):
        cluster = None
        try:
            if local_workers is not None:
                cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=local_workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    silence_logs=40,
                )
                scheduler = cluster.scheduler_address
            try:
                if cluster is None and scheduler is not None:
                    _handshake(scheduler, timeout)
                client = distributed.Client(scheduler, timeout=f"{timeout}s", set_as_default=True)  # type: ignore[no-untyped-call]
            except (OSError, TimeoutError) as e:
                raise DaskUnavailable(
                    f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s ({e})"
                ) from None
            try:
                yield client
            finally:
                client.close(timeout=timeout)  # type: ignore[no-untyped-call]
        finally:
            if cluster is not None:
                cluster.close(timeout=timeout)


def _handshake(address: str, timeout: float) -> None:
    """Open and close one comm to ``address`` within ``timeout`` seconds.

    distributed's connect waits for the peer's handshake with no time limit, so a peer
    that accepts the TCP connection and never speaks (a wrong port, a stopped process
    whose socket stays open) would hang ``Client()`` forever. This probe bounds that
    wait; after it, every step of ``Client()`` has a timeout."""
    import asyncio
    import concurrent.futures

    from distributed.comm.core import connect as comm_connect

    async def probe() -> None:
        comm = await asyncio.wait_for(comm_connect(address, timeout=timeout), timeout)  # type: ignore[no-untyped-call]
        await comm.close()

    # A thread of its own: the caller may already run an event loop (a notebook).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(asyncio.run, probe())
    try:
        future.result()
    except asyncio.TimeoutError:
        raise TimeoutError(f"no Dask handshake from {address} after {timeout:g} s") from None


def _dataset_frame(ds: Dataset, labels: list[str], masks: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({"id": pd.array(list(ds.ids), dtype="string")})
    y, m = np.asarray(ds.y_true), np.asarray(ds.mask, dtype=bool)
    for j, (lc, mc) in enumerate(zip(labels, masks, strict=True)):
        frame[lc] = y[:, j].astype(np.int8)
        frame[mc] = m[:, j]
    return frame


class _Counts(NamedTuple):
    """The counts of joined partitions (they add)."""

    n_read: int
    n_null: int
    n_unknown: int
    n_matched: int
    n_null_known: int = 0


def _joined_arrays(
    part: pd.DataFrame, *, cats: list[str], labels: list[str], masks: list[str]
) -> tuple[Any, Any, Any, None, _Counts]:
    """One joined partition: the labels, scores and mask of its matched rows with a
    score (no weights), and its counts (rows read, rows without any score, unknown
    ids, matched ids, matched ids without any score)."""
    matched = (part["_merge"] == "both").to_numpy()
    scores = part[cats].to_numpy(dtype=None)
    null = np.isnan(scores.astype(np.float64)).all(axis=1) if len(part) else np.zeros(0, bool)
    use = matched & ~null
    counts = _Counts(
        len(part),
        int(null.sum()),
        int((~matched).sum()),
        int(matched.sum()),
        int((matched & null).sum()),
    )
    return part[labels].to_numpy()[use], scores[use], part[masks].to_numpy()[use], None, counts


def _add_counts(*parts: _Counts) -> _Counts:
    return _Counts(*(sum(col) for col in zip(*parts, strict=True)))


def _tree_report(
    client: Any,
    blocks: list[tuple[Any, ...]],
    threshold: Any,
    wait: Callable[[Any], None] | None,
) -> MultilabelAccumulator:
    """The report's accumulator with every label's runs, tree-merged."""
    block = task(report_block)
    opts = {"threshold": threshold, "n_jobs": 1, "keep_runs": True}
    states = [block(*b, **opts) for b in blocks]
    acc: MultilabelAccumulator = _compute(
        client, tree_reduce(states, report_merge, split_every=8, **opts), wait
    )
    return acc


def _compute(client: Any, graph: Any, wait: Callable[[Any], None] | None) -> Any:
    """The value of ``graph`` computed on ``client``, ``wait`` called on its future."""
    fut = client.compute(graph)
    if wait is not None:
        wait(fut)
    return fut.result()


def score_on_dask(
    client: Any,
    predictions: str | Path,
    dataset: Dataset,
    *,
    threshold: float = 0.5,
    on_mismatch: str = "error",
    progress: Progress | None = None,
    wait: Callable[[Any], None] | None = None,
    memory_limit: str | int | None = None,
) -> EvaluationResult:
    """The report of Parquet ``predictions`` against ``dataset``, joined and scored on
    the cluster of ``client``. ``on_mismatch="drop"`` leaves dataset rows without a
    prediction and predictions of unknown ids out (counted); duplicate ids are always
    an error here (which of two rows to keep is not defined across partitions).
    ``wait(futures)`` is called while the cluster computes (a progress bar).
    ``memory_limit``: the bytes a worker may use for the metric states (default 2 GiB
    or half the smallest worker's limit), which decides between the tree merge and
    range partitions and sizes the ranges."""
    import distributed

    started = time.perf_counter()
    tax = dataset.taxonomy
    cats = list(tax.ids)
    step = progress or (lambda name: None)
    step("reading predictions (Dask)")
    try:
        preds = dd.read_parquet(str(predictions))
    except (OSError, ValueError) as e:
        raise PredictionError(f"{predictions}: cannot read as Parquet with Dask: {e}") from None
    missing_cols = [c for c in ["id", *cats] if c not in preds.columns]
    if missing_cols:
        raise PredictionError(
            f"{predictions}: --dask-* scoring reads an 'id' column and one score column per "
            f"category; missing: {', '.join(missing_cols)}"
        )
    preds = preds[["id", *cats]]
    preds["id"] = preds["id"].astype("string")
    labels = [f"__y_{j}" for j in range(len(cats))]
    masks = [f"__m_{j}" for j in range(len(cats))]
    frame = _dataset_frame(dataset, labels, masks)
    step("scattering the dataset")
    pieces = [
        frame.iloc[i : i + DATASET_ROWS_PER_PARTITION]
        for i in range(0, max(len(frame), 1), DATASET_ROWS_PER_PARTITION)
    ]
    futures = client.scatter(pieces)
    ds_frame = dd.from_delayed(futures, meta=frame.iloc[:0], verify_meta=False)
    step("joining on id and scoring (Dask)")
    # A left join keeps every prediction row: its partitions say which rows matched,
    # which have no score; one task per partition takes its matched, scored rows (the
    # blocks of the metric states) and counts the rest. Duplicate ids are counted first
    # (ids only).
    joined = preds.merge(ds_frame, on="id", how="left", indicator=True)
    arrays = task(_joined_arrays)
    opts = {"cats": cats, "labels": labels, "masks": masks}
    parts: list[Any] = [arrays(part, **opts) for part in joined.to_delayed()]
    blocks = [(p[0], p[1], p[2], None) for p in parts]
    counted = tree_reduce([p[4] for p in parts], _add_counts, split_every=32)
    dup = preds["id"].value_counts()
    state_bytes, workers = state_budget(memory_limit)
    ranges_info: dict[str, Any] = {"path": "tree merge"}
    try:
        n_duplicate = int(client.compute((dup[dup > 1] - 1).sum()).result())
        if n_duplicate:
            raise PredictionError(
                f"{predictions}: {n_duplicate} prediction rows repeat an id (Dask scoring "
                "refuses duplicates: keep one row per id)"
            )
        report_opts = {"threshold": threshold, "n_jobs": 1}
        survey, total = _compute(
            client, task(tuple)([survey_graph(blocks, report_opts), counted]), wait
        )
        binary = None
        if survey.rows == 0 or tree_suffices(survey, state_bytes):
            acc = _tree_report(client, blocks, threshold, wait)
        else:
            plan = plan_ranges(
                survey, n_ranges=None, state_bytes=state_bytes, n_workers=workers, micro=True
            )
            acc, binary = ranged_report(blocks, survey, plan)
            ranges_info = {
                "path": "range partitions",
                "ranges": plan.n_ranges,
                "passes": len(plan.passes),
            }
    except (distributed.client.FutureCancelledError, OSError, TimeoutError) as e:
        raise DaskUnavailable(f"lost the Dask scheduler while scoring ({e})") from None
    n_null, n_unknown, n_matched = total.n_null, total.n_unknown, total.n_matched
    n_joined = n_matched - total.n_null_known
    n_missing = len(dataset.ids) - n_matched
    if on_mismatch == "error" and (n_unknown or n_missing):
        raise PredictionError(
            f"{predictions}: {n_missing} dataset rows have no prediction and "
            f"{n_unknown} prediction rows have ids not in the dataset (pass --on-mismatch "
            "drop to score the rows that match)"
        )
    if n_joined == 0:
        raise PredictionError(f"{predictions}: no dataset row has a usable prediction")
    with warnings.catch_warnings():  # the report states undefined figures in its notes
        warnings.simplefilter("ignore")
        report = acc.compute(binary=binary)
    summary = report_figures(report, tax, threshold)
    notes = list(summary.notes)
    if n_missing:
        notes.append(f"{n_missing} dataset rows have no prediction and are not scored")
    if n_null:
        notes.append(f"{n_null} prediction rows have no score (null) and are not scored")
    if n_unknown:
        notes.append(f"dropped {n_unknown} unknown-id prediction rows (on_mismatch=drop)")
    notes.append(
        "scored on a Dask cluster: no scored_rows.parquet, HTML report, --plots figures, "
        "card recipe or bootstrap intervals (each needs every scored row in memory)"
    )
    counts = streamed_counts(
        report,
        dataset_rows=len(dataset.ids),
        scored=n_joined,
        missing=n_missing,
        null=n_null,
        failed=0,
        duplicate=0,
        unknown=n_unknown,
    )
    info = {
        "engine": "dask",
        "scheduler": client.scheduler.address,
        "prediction_rows_read": total.n_read,
        "workers": len(client.scheduler_info().get("workers", {})),
        "seconds": round(time.perf_counter() - started, 3),
        "metric_states": ranges_info,
        "intervals": "not computed on Dask",
        "absent": ["scored_rows.parquet", "report.html", "plots", "card_recipe"],
    }
    return streamed_result(
        summary,
        tax=tax,
        threshold=threshold,
        on_mismatch=on_mismatch,
        engine=("dask", info),
        card_caveat="not computed on Dask: the card's recipe walks every row in memory",
        dataset={
            "name": dataset.name,
            "level": dataset.level,
            "source": dataset.source,
            "sha256": dataset.sha256,
            "rows": len(dataset.ids),
        },
        system={"kind": "predictions", "source": str(predictions), "format": "parquet"},
        counts=counts,
        notes=notes,
        binary_scores=False,
    )
