"""``toxeval score`` past one process's memory: out of core on Parquet shards
(:mod:`toxeval.outofcore`) and on a Dask cluster (:mod:`toxeval.dask`), with the options
that do not apply there refused before any work (exit 2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toxeval.cli.outputs import check_args, finish_command, write_out_folder
from toxeval.cli.parser import UsageError
from toxeval.cli.progress import progress_rows, progress_steps

__all__ = ["out_of_core_reason", "score_dask", "score_out_of_core"]


def out_of_core_reason(args: argparse.Namespace) -> str | None:
    """Why ``toxeval score`` runs out of core (None: in memory), with the options that
    do not apply there refused before any work."""
    from toxeval.outofcore import parse_memory_limit
    from toxeval.outofcore.choice import out_of_core_reason as reason_for

    if args.memory_limit is not None:
        try:
            parse_memory_limit(args.memory_limit)
        except ValueError as e:
            raise UsageError(f"--memory-limit: {e}") from None
    if args.batch_input:
        if args.memory_limit is not None or args.spill_dir is not None:
            raise UsageError("--memory-limit and --spill-dir do not apply to --batch-input")
        return None
    reason = reason_for(args.predictions, args.dataset, args.memory_limit)
    if reason is None:
        if args.spill_dir is not None:
            raise UsageError(
                "--spill-dir applies out of core only (with --memory-limit, or a directory "
                "of shards)"
            )
        return None
    if args.spill_dir is not None and not Path(args.spill_dir).is_dir():
        raise UsageError(f"--spill-dir {args.spill_dir}: not a directory")
    refused = {
        "--html": bool(getattr(args, "html", False)),
        "--plots": bool(args.plots),
        "--format": args.format not in ("auto", "parquet"),
        "--parse-policy": args.parse_policy != "exclude",
        "--mapping": args.mapping is not None,
        "--data-dir": args.data_dir is not None,
        "--rule": args.rule != "majority",
    }
    given = [flag for flag, on in refused.items() if on]
    if given:
        raise UsageError(
            f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply out of core "
            f"({reason}): the HTML page and figures need every scored row in memory, and "
            "the inputs are Parquet with labels as they are; drop "
            + ("it" if len(given) == 1 else "them")
        )
    return reason


def score_out_of_core(args: argparse.Namespace) -> int:
    """``toxeval score`` out of core (toxeval.score with a memory limit), with a rows bar."""
    from toxeval.scoring import score

    _no_operating_points(args, "out of core")

    with progress_rows(args.quiet) as (step, advance):
        result = score(
            args.predictions,
            None if _same_path(args.dataset, args.predictions) else args.dataset,
            taxonomy=args.taxonomy,
            on_mismatch=args.on_mismatch,
            threshold=args.threshold,
            progress=step,
            rows_progress=advance,
            memory_limit=args.memory_limit,
            spill_dir=args.spill_dir,
            bootstrap=args.bootstrap,
            bootstrap_seed=args.bootstrap_seed,
        )
        written = write_out_folder(result, args, step)
    finish_command(result, args, written)
    return 0


def score_dask(args: argparse.Namespace, dataset_options: dict[str, Any]) -> int:
    """``toxeval score --dask-scheduler/--dask-local``: the id join and the metrics on a
    Dask cluster (toxeval.dask.score), with Dask's progress bar on a terminal."""
    if args.dask_scheduler is not None and args.dask_local is not None:
        raise UsageError("give --dask-scheduler or --dask-local, not both")
    _no_operating_points(args, "on Dask")
    if args.dask_local is not None and args.dask_local < 1:
        raise UsageError(f"--dask-local {args.dask_local}: give at least 1 worker")
    if not args.dask_timeout > 0:
        raise UsageError(f"--dask-timeout {args.dask_timeout:g}: give a positive number of seconds")
    refused = {
        "--batch-input": bool(args.batch_input),
        "--spill-dir": args.spill_dir is not None,
        "--html": bool(getattr(args, "html", False)),
        "--plots": bool(args.plots),
        "--format": args.format not in ("auto", "parquet"),
        "--parse-policy": args.parse_policy != "exclude",
        "--mapping": args.mapping is not None,
    }
    given = [flag for flag, on in refused.items() if on]
    if given:
        raise UsageError(f"{', '.join(given)}: not with --dask-scheduler/--dask-local")
    try:
        from toxeval.dask.score import DaskUnavailable, connect, score_on_dask
    except ImportError as e:
        raise UsageError(str(e)) from None
    from toxeval.outofcore import parse_memory_limit

    if args.memory_limit is not None:
        try:
            parse_memory_limit(args.memory_limit)
        except ValueError as e:
            raise UsageError(f"--memory-limit: {e}") from None
    from toxeval.datasets import load_dataset

    args.out_of_core = "dask"  # the report files only (no scored rows, HTML, plots)
    check_args(args)
    with progress_steps(args.quiet) as step:
        step("loading dataset")
        ds = load_dataset(args.dataset, **dataset_options)
        try:
            with connect(
                scheduler=args.dask_scheduler,
                local_workers=args.dask_local,
                timeout=args.dask_timeout,
            ) as client:
                result = score_on_dask(
                    client,
                    args.predictions,
                    ds,
                    threshold=args.threshold,
                    on_mismatch=args.on_mismatch,
                    progress=step,
                    wait=None if args.quiet or not sys.stderr.isatty() else _dask_bar,
                    memory_limit=args.memory_limit,
                )
        except DaskUnavailable as e:
            raise UsageError(str(e)) from None
        written = write_out_folder(result, args, step)
    finish_command(result, args, written)
    return 0


def _dask_bar(futures: Any) -> None:
    """Dask's own progress bar of the cluster's tasks (on a terminal)."""
    from distributed import progress

    progress(futures)  # type: ignore[no-untyped-call]


def _no_operating_points(args: argparse.Namespace, where: str) -> None:
    """Operating points and slices need every scored row in memory: refused before any
    work."""
    if getattr(args, "slice_by", None):
        raise UsageError(
            f"--slice-by needs every scored row in memory; this run scores {where} "
            "(score the rows in memory to slice them)"
        )
    for opt in ("operating_point", "thresholds_from"):
        if getattr(args, opt, None) is not None:
            flag = "--" + opt.replace("_", "-")
            raise UsageError(
                f"{flag} needs every scored row in memory; this run scores {where} "
                "(score a sample in memory, or run 'toxeval thresholds' on a results folder)"
            )


def _same_path(a: str | None, b: str) -> bool:
    try:
        return a is not None and Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False
