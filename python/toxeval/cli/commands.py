"""The subcommands: ``evaluate``, ``predict``, ``score`` (one dump or a batch),
``datasets`` and ``taxonomy``, each taking parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toxeval.cli.outputs import (
    LINK_TO_NOTHING,
    add_slices,
    check_args,
    finish_command,
    sliced_dataset,
    write_out_folder,
)
from toxeval.cli.parser import UsageError
from toxeval.cli.progress import TIMINGS, progress_steps
from toxeval.cli.run_options import EVALUATE_OWN, runner_keywords
from toxeval.cli.scale import out_of_core_reason, score_dask, score_out_of_core
from toxeval.cli.thresholds import cmd_thresholds

if TYPE_CHECKING:
    pass


def _cmd_predict(args: argparse.Namespace) -> int:
    from toxeval.llm import predict

    # predict's --out is the run file (dest run_file)
    if args.batch_file and args.run_file:
        raise UsageError("--batch-file writes requests instead of a run file: drop --out")
    if not args.batch_file and not args.run_file and not args.dry_run:
        raise UsageError("name the run file: --out RUNFILE (or --dry-run, or --batch-file)")
    keywords = runner_keywords(args)
    keywords["run_file"] = args.run_file or "run.jsonl"  # --out "" too, as not given
    summary = predict(args.dataset, **keywords)
    if args.batch_file:
        print(
            f"wrote {summary.requests} Batch API requests for {summary.items} items to "
            f"{args.batch_file} (and {args.batch_file}.toxeval.json: keep it to score the "
            f"output with 'toxeval score OUTPUT --dataset ... --batch-input {args.batch_file}')"
        )
        from toxeval.llm.batch import openai_limits_note

        note = openai_limits_note(args.batch_file, summary.requests)
        if note:
            print(f"toxeval: note: {note}", file=sys.stderr)
    else:
        print(summary.line())
    for note in summary.notes:
        print(f"toxeval: note: {note}", file=sys.stderr)
    return 0


def _min_annotators(args: argparse.Namespace) -> int:
    return 1 if args.min_annotators is None else int(args.min_annotators)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    TIMINGS.mark("importing")
    from toxeval.llm import predict
    from toxeval.llm.request_spec import changed_from_defaults
    from toxeval.scoring import evaluate

    check_args(args)
    _system_arrow_pool()
    if args.dry_run or args.batch_file:
        raise UsageError("--dry-run and --batch-file belong to 'toxeval predict'")
    run: dict[str, Any] = {}
    options = runner_keywords(args, exclude=EVALUATE_OWN)
    if args.detector.strip().lower() == "lexicon" and not args.run_file:
        # the baseline runs in-process; an option given (--limit, --sample, or one that
        # only a model server takes and predict refuses) sends it through the runner
        given = changed_from_defaults(predict, {k: v for k, v in options.items() if k != "quiet"})
        options = {k: options[k] for k in given}
    if options:
        run_file = args.run_file or (str(Path(args.out) / "run.jsonl") if args.out else None)
        run = {"run_file": run_file, **options, "quiet": args.quiet}
    # the run's own progress bar replaces the step spinner (one live display at a time)
    loading = _dataset_options(args)
    ds = sliced_dataset(args, loading)
    with progress_steps(args.quiet or bool(run)) as step:
        result = evaluate(
            args.dataset if ds is None else ds,
            args.detector,
            threshold=args.threshold,
            progress=step,
            **_bootstrap_options(args),
            **(loading if ds is None else {"taxonomy": args.taxonomy}),
            **run,
        )
        add_slices(result, ds, args, loading)
        written = write_out_folder(result, args, step)
    finish_command(result, args, written)
    return 0


def _dataset_options(args: argparse.Namespace) -> dict[str, Any]:
    """How every command loads its dataset: the taxonomy, where registry datasets are
    looked for, and the rule that turns annotations into labels."""
    return {
        "taxonomy": args.taxonomy,
        "data_dir": args.data_dir,
        "rule": args.rule,
        "min_annotators": _min_annotators(args),
    }


def _bootstrap_options(args: argparse.Namespace) -> dict[str, Any]:
    """The report's intervals: resamples (0: none) and their seed."""
    return {"bootstrap": args.bootstrap, "bootstrap_seed": args.bootstrap_seed}


def _cmd_score(args: argparse.Namespace) -> int:
    TIMINGS.mark("importing")
    from toxeval.scoring import score

    if args.dask_scheduler is not None or args.dask_local is not None:
        return score_dask(args, _dataset_options(args))
    args.out_of_core = out_of_core_reason(args)
    check_args(args)
    _system_arrow_pool()
    if args.batch_input:
        return _score_batch(args)
    if args.out_of_core:
        return score_out_of_core(args)
    loading = _dataset_options(args)
    ds = sliced_dataset(args, loading)
    with progress_steps(args.quiet) as step:
        result = score(
            args.predictions,
            args.dataset if ds is None else ds,
            parse_policy=args.parse_policy,
            on_mismatch=args.on_mismatch,
            format=args.format,
            mapping=args.mapping,
            threshold=args.threshold,
            progress=step,
            **_bootstrap_options(args),
            **(loading if ds is None else {"taxonomy": args.taxonomy}),
        )
        add_slices(result, ds, args, loading)
        written = write_out_folder(result, args, step)
    finish_command(result, args, written)
    return 0


def _score_batch(args: argparse.Namespace) -> int:
    """A Batch API output, read through the sidecar of its input into a run file, then
    scored like any run file. The run file is written in a temporary folder; with --out
    it is kept there as run.jsonl, unless the folder holds another run.jsonl (the run
    file of a live run, or the batch output itself), which is never replaced."""
    import shutil
    import tempfile

    from toxeval.datasets import load_dataset
    from toxeval.llm.batch import batch_run_file
    from toxeval.output_dir import staged_file
    from toxeval.scoring.intervals import add_intervals
    from toxeval.scoring.runs import score_run
    from toxeval.slices import check_slice_columns

    given = {
        "--format": args.format != "auto",
        "--parse-policy": args.parse_policy != "exclude",
        "--on-mismatch": args.on_mismatch != "error",
        "--mapping": args.mapping is not None,
    }
    unused = [flag for flag, on in given.items() if on]
    if unused:
        raise UsageError(
            f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} not apply to a Batch "
            "API output (--batch-input): it is read as the run file the batch gives, with "
            "the options its sidecar records; drop " + ("it" if len(unused) == 1 else "them")
        )
    ds = load_dataset(args.dataset, **_dataset_options(args))
    if args.slice_by:
        try:
            check_slice_columns(ds, args.slice_by)
        except ValueError as e:
            raise UsageError(str(e)) from None
    with tempfile.TemporaryDirectory() as tmp:
        run_file = Path(tmp) / "run.jsonl"
        batch_run_file(args.predictions, args.batch_input, ds, run_file)
        kept = Path(args.out) / "run.jsonl" if args.out else None
        if kept is not None and kept.exists() and not _same_bytes(kept, run_file):
            raise UsageError(
                f"--out {args.out}: it holds a run.jsonl that differs from this batch's run "
                "file (another run's answers, the batch output itself, or this batch read by "
                "another toxeval version); it is kept: move it away or choose another output "
                "folder"
            )
        with progress_steps(args.quiet) as step:
            try:
                result = score_run(run_file, ds, threshold=args.threshold, progress=step)
            except ValueError as e:
                raise ValueError(str(e).replace(str(run_file), str(args.predictions))) from None
            _batch_provenance(result, args.predictions, args.batch_input)
            if args.bootstrap:
                step("bootstrap intervals")
            add_intervals(result, args.bootstrap, seed=args.bootstrap_seed)
            add_slices(result, ds if args.slice_by else None, args, _dataset_options(args))
            written = write_out_folder(result, args, step)
        if kept is not None:
            with staged_file(kept, binary=True) as f, open(run_file, "rb") as src:
                shutil.copyfileobj(src, f)
    finish_command(result, args, written)
    return 0


def _batch_provenance(result: Any, output: str, batch_input: str) -> None:
    """The report and results.json name the Batch API output (with its sha256) and the
    batch input, not the temporary run file they were read through."""
    from toxeval.files import file_record

    rec = file_record(output)
    result.inputs["predictions"] = rec
    result.system = {
        **result.system,
        "source": str(output),
        "sha256": rec["sha256"],
        "batch_input": str(batch_input),
    }


def _same_bytes(a: Path, b: Path) -> bool:
    import filecmp

    try:
        return a.is_file() and bool(filecmp.cmp(a, b, shallow=False))
    except OSError:
        return False


def _cmd_datasets(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from toxeval.console_output import output_console
    from toxeval.datasets import list_datasets

    _check_data_dir(args.data_dir)
    table = Table(title="known datasets")
    for col in ("name", "level", "found", "where looked", "description"):
        table.add_column(col)
    for info in list_datasets(args.data_dir):
        table.add_row(
            *map(
                escape,
                (
                    info.name,
                    info.level,
                    info.path or "not found",
                    "\n".join(info.looked_at) or "-",
                    info.description,
                ),
            )
        )
    output_console().print(table)
    return 0


def _check_data_dir(data_dir: str | None) -> None:
    """``--data-dir DIR`` names an existing folder: a typo would otherwise list every
    dataset as not found, as if the folder were empty."""
    if data_dir is None:
        return
    path = Path(data_dir)
    if not path.exists():
        raise UsageError(f"--data-dir {data_dir}: no such folder")
    if not path.is_dir():
        raise UsageError(f"--data-dir {data_dir}: is not a folder")


def _cmd_taxonomy(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from toxeval.console_output import output_console
    from toxeval.taxonomy import list_mappings, list_taxonomies, load_taxonomy

    tax = load_taxonomy(args.name)
    table = Table(
        title=escape(f"{tax.name} {tax.version} (K={tax.k})"),
        caption=escape(
            f"{tax.description}\nbuilt-in: {', '.join(list_taxonomies())}\n"
            f"label mappings (--mapping): {', '.join(list_mappings())}"
        ),
        show_lines=True,
    )
    for col in ("id", "name", "definition", "aliases"):
        table.add_column(col)
    for c in tax.categories:
        table.add_row(*map(escape, (c.id, c.name, c.description, ", ".join(c.aliases))))
    output_console().print(table)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from toxeval.compare import compare, split_spec

    if args.margin is not None and args.fail_if_worse is None:
        raise UsageError("--margin is the tolerance of --fail-if-worse: give --fail-if-worse too")
    if args.html:
        _check_compare_html(Path(args.html), [split_spec(r)[1] for r in args.results])
    result = compare(
        args.results,
        baseline=args.baseline,
        n_resamples=args.bootstrap,
        seed=args.seed,
        common_rows=args.common_rows,
        fail_if_worse=args.fail_if_worse,
        margin=0.0 if args.margin is None else args.margin,
    )
    if args.format == "table":
        result.render()
    else:
        text = {"markdown": result.to_markdown, "latex": result.to_latex, "csv": result.to_csv}[
            args.format
        ]()
        print(text, end="")
    if args.html:
        try:
            result.write_html(args.html)
        except OSError as e:
            raise UsageError(f"--html {args.html}: cannot write the page: {e}") from None
    if result.gate is None:
        return 0
    # the table and page are for reading; the verdict goes where a CI log shows it
    print("\n".join(result.gate.lines()), file=sys.stderr)
    return result.gate.exit_code


def _check_compare_html(target: Path, folders: list[Path]) -> None:
    """Before any work: ``--html FILE`` of compare names a file in an existing folder,
    and not one inside a results folder being compared (its files are the inputs, and
    report.html there is that evaluation's own report)."""
    if target.is_symlink() and not target.exists():
        raise UsageError(f"--html {target}: {LINK_TO_NOTHING}")
    if target.is_dir():
        raise UsageError(f"--html {target}: is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"--html {target}: the folder {target.parent} does not exist")
    where = target.resolve().parent  # where the page lands, through any symbolic link
    for folder in folders:
        if folder.is_dir() and where == folder.resolve():
            raise UsageError(
                f"--html {target}: it is inside the results folder {folder}, which is an "
                "input of the comparison; write the page elsewhere"
            )


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "compare": _cmd_compare,
    "evaluate": _cmd_evaluate,
    "predict": _cmd_predict,
    "score": _cmd_score,
    "datasets": _cmd_datasets,
    "taxonomy": _cmd_taxonomy,
    "thresholds": cmd_thresholds,
}


def _system_arrow_pool() -> None:
    """Give pyarrow the system allocator for the data this command reads.

    Arrow's default pool (mimalloc in the wheels) showed the same huge-page stalls as
    numpy on a busy machine (~0.8 s more system time per 1M-row Parquet run than the
    system or jemalloc pool); the buffers here are large and read once, which the
    system allocator serves well. ``ARROW_DEFAULT_MEMORY_POOL``, when set, decides."""
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
