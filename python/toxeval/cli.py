"""The ``toxeval`` command line: evaluate, predict, score, datasets, taxonomy.

Exit codes: 0 ok; 2 bad usage or bad input (a one-line ``toxeval: error: ...`` on stderr,
no traceback); 1 internal error (one line and a hint to rerun with ``TOXEVAL_DEBUG=1``,
which prints the traceback). See docs/cli.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from toxeval.scoring import EvaluationResult, _ScoredArrays

__all__ = ["main"]

PROG = "toxeval"
PLOT_FILES = ("pr_curves.png", "ap_by_category.png")


class _UsageError(Exception):
    """Bad command-line usage (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _version() -> str:
    from toxeval._core import __version__

    return str(__version__)


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Multi-label toxicity evaluation: mAP, label ranking loss and more, "
        "with unknown labels masked.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    def common(sp: argparse.ArgumentParser, dataset_required: bool) -> None:
        sp.add_argument(
            "--dataset",
            metavar="NAME|PATH",
            required=dataset_required,
            default=None,
            help="registry name (Q-A-MLL, H-X-MLL, R-A-MLL, openai-moderation, demo) or a file"
            + ("" if dataset_required else "; default: the embedded demo set"),
        )
        sp.add_argument("--data-dir", metavar="DIR", help="where registry datasets are looked for")
        sp.add_argument("--taxonomy", metavar="NAME|FILE", help="taxonomy name or TOML file")
        sp.add_argument(
            "--rule",
            choices=("majority", "union", "at_least"),
            default="majority",
            help="how per-annotator labels become targets (default: majority)",
        )
        sp.add_argument(
            "--min-annotators",
            type=int,
            default=None,
            metavar="K",
            help="with --rule at_least (only): annotators needed for a positive (default 1)",
        )
        sp.add_argument(
            "--threshold",
            type=float,
            default=0.5,
            help="score >= threshold counts as positive for F1, Hamming loss and the card "
            "recipe (default 0.5)",
        )
        sp.add_argument(
            "--out", metavar="DIR", help="write results.json, report.md, per_category.csv"
        )
        sp.add_argument(
            "--plots",
            action="store_true",
            help=f"also write {' and '.join(PLOT_FILES)} (per-category precision-recall "
            "curves, AP per category) into --out; needs matplotlib: pip install "
            '"toxeval[plot]"',
        )
        sp.add_argument(
            "--html",
            action="store_true",
            help="also write report.html into --out: one self-contained page (figures, "
            "intervals, sortable per-category table; opens offline)",
        )
        sp.add_argument(
            "--quiet", "-q", action="store_true", help="no progress bar; one summary line"
        )

    ev = sub.add_parser("evaluate", help="run a detector over a dataset and score it")
    common(ev, dataset_required=False)
    ev.add_argument(
        "--detector",
        default="lexicon",
        metavar="SPEC",
        help="lexicon (default), openai:MODEL, openai-moderation[:MODEL], llama-guard:MODEL "
        "or python:module:attr",
    )
    ev.add_argument(
        "--run-file",
        metavar="FILE",
        help="keep the answers in this run file (default: run.jsonl in --out; resumable)",
    )
    _llm_options(ev)

    pr = sub.add_parser(
        "predict", help="run a system over a dataset and write the run file (resumable)"
    )
    pr.add_argument("--dataset", metavar="NAME|PATH", required=True, help="as for evaluate")
    pr.add_argument("--data-dir", metavar="DIR", help="where registry datasets are looked for")
    pr.add_argument("--taxonomy", metavar="NAME|FILE", help="taxonomy name or TOML file")
    pr.add_argument("--rule", choices=("majority", "union", "at_least"), default="majority")
    pr.add_argument("--min-annotators", type=int, default=None, metavar="K")
    pr.add_argument("--detector", required=True, metavar="SPEC", help="as for evaluate")
    pr.add_argument(
        "--out",
        metavar="RUNFILE",
        help="the run file answers are appended to (rerun to resume); not with --batch-file",
    )
    pr.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _llm_options(pr)

    sc = sub.add_parser("score", help="score an existing prediction dump")
    sc.add_argument("predictions", metavar="PREDICTIONS", help="JSONL/CSV/Parquet/NPY/NPZ file")
    common(sc, dataset_required=True)
    sc.add_argument(
        "--format", choices=("auto", "jsonl", "csv", "parquet", "npy", "npz"), default="auto"
    )
    sc.add_argument(
        "--parse-policy",
        choices=("zeros", "exclude", "error"),
        default="exclude",
        help="raw-text outputs that cannot be parsed: leave out and count (default), score "
        "as all-zero (marked in the report), or fail",
    )
    sc.add_argument(
        "--on-mismatch",
        choices=("error", "drop"),
        default="error",
        help="missing, duplicate or unknown ids: fail (default) or drop and report",
    )
    sc.add_argument("--mapping", metavar="NAME|FILE", help="code mapping, e.g. llama-guard-3")
    sc.add_argument(
        "--batch-input",
        metavar="FILE",
        help="PREDICTIONS is an OpenAI Batch API output file; FILE is the batch input "
        "written by 'toxeval predict --batch-file FILE' (its sidecar says how to read it)",
    )

    ds = sub.add_parser("datasets", help="list known datasets and where each is looked for")
    ds.add_argument("--data-dir", metavar="DIR")

    tx = sub.add_parser("taxonomy", help="print a taxonomy's categories and definitions")
    tx.add_argument("name", nargs="?", default="toxeval-15", metavar="NAME|FILE")
    return p


def _llm_options(sp: argparse.ArgumentParser) -> None:
    """The options of a run through an API (docs/cli.md, "Running LLMs")."""
    g = sp.add_argument_group("API detectors (openai:, openai-moderation, llama-guard:)")
    g.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible API root (default: $OPENAI_BASE_URL, else https://api.openai.com/v1)",
    )
    g.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY); the key is "
        "never written anywhere",
    )
    g.add_argument("--scoring", choices=("json", "logprobs", "sample", "labels"), default="json")
    g.add_argument(
        "--structured", action="store_true", help="ask for a JSON schema (response_format)"
    )
    g.add_argument("--samples", type=int, default=1, metavar="N", help="answers per item (sample)")
    g.add_argument("--template", metavar="NAME|FILE", help="prompt template (shipped name or file)")
    g.add_argument("--temperature", type=float, default=None)
    g.add_argument("--max-tokens", type=int, default=None, metavar="N")
    g.add_argument(
        "--seed",
        type=int,
        default=None,
        help="sent to the model; also seeds --sample (default 0 there)",
    )
    g.add_argument("--concurrency", type=int, default=32, metavar="N", help="requests in flight")
    g.add_argument("--rpm", type=float, default=None, help="requests per minute at most")
    g.add_argument("--tpm", type=float, default=None, help="prompt tokens per minute at most")
    g.add_argument(
        "--timeout",
        default="10,120",
        metavar="S|CONNECT,READ",
        help="seconds to connect and to wait for an answer (default 10,120)",
    )
    g.add_argument("--max-retries", type=int, default=6, metavar="N")
    g.add_argument("--limit", type=int, default=None, metavar="N", help="the first N rows only")
    g.add_argument("--sample", type=int, default=None, metavar="N", help="N rows drawn with --seed")
    g.add_argument(
        "--dry-run",
        action="store_true",
        help="print the number of requests and estimated prompt tokens; send nothing",
    )
    g.add_argument(
        "--batch-file",
        metavar="FILE",
        help="write OpenAI Batch API requests to FILE instead of sending them",
    )


def _timeout_arg(text: str) -> float | tuple[float, float]:
    try:
        parts = [float(p) for p in str(text).split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return (parts[0], parts[1])
    raise _UsageError(f"--timeout {text}: give seconds, or CONNECT,READ seconds")


def _predict_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of toxeval.llm.predict that the command line sets."""
    return {
        "base_url": args.base_url,
        "api_key_env": args.api_key_env,
        "scoring": args.scoring,
        "structured": args.structured,
        "samples": args.samples,
        "template": args.template,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "rpm": args.rpm,
        "tpm": args.tpm,
        "timeout": _timeout_arg(args.timeout),
        "max_retries": args.max_retries,
        "limit": args.limit,
        "sample": args.sample,
        "quiet": args.quiet,
    }


def _cmd_predict(args: argparse.Namespace) -> int:
    from toxeval.llm import predict

    if args.batch_file and args.out:
        raise _UsageError("--batch-file writes requests instead of a run file: drop --out")
    if not args.batch_file and not args.out and not args.dry_run:
        raise _UsageError("name the run file: --out RUNFILE (or --dry-run, or --batch-file)")
    summary = predict(
        args.dataset,
        args.detector,
        args.out or "run.jsonl",
        taxonomy=args.taxonomy,
        data_dir=args.data_dir,
        rule=args.rule,
        min_annotators=_min_annotators(args),
        dry_run=args.dry_run,
        batch_file=args.batch_file,
        **_predict_options(args),
    )
    if args.batch_file:
        print(
            f"wrote {summary.requests} Batch API requests for {summary.items} items to "
            f"{args.batch_file} (and {args.batch_file}.toxeval.json: keep it to score the "
            f"output with 'toxeval score OUTPUT --dataset ... --batch-input {args.batch_file}')"
        )
    else:
        print(summary.line())
    return 0


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


class _Timings:
    """Wall time per named step, printed as one JSON line on stderr at exit when
    ``$TOXEVAL_TIMINGS`` is set (benches/bench_end_to_end.py reads it), followed by a
    second line with the process CPU time (all threads) of each step."""

    def __init__(self) -> None:
        self.enabled = False
        self._marks: list[tuple[str, float, float]] = []

    def reset(self) -> None:
        self.enabled = os.environ.get("TOXEVAL_TIMINGS", "") not in ("", "0")
        self._marks = []

    def mark(self, name: str) -> None:
        if self.enabled:
            self._marks.append((name, time.perf_counter(), time.process_time()))

    def emit(self) -> None:
        if not self.enabled or not self._marks:
            return
        end = ("", time.perf_counter(), time.process_time())
        wall: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for (name, w0, c0), (_, w1, c1) in zip(self._marks, [*self._marks[1:], end], strict=True):
            wall[name] = round(wall.get(name, 0.0) + w1 - w0, 4)
            cpu[name] = round(cpu.get(name, 0.0) + c1 - c0, 4)
        print(f"{PROG}: timings: {json.dumps(wall)}", file=sys.stderr)
        print(f"{PROG}: cpu timings: {json.dumps(cpu)}", file=sys.stderr)


_TIMINGS = _Timings()


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str], None]]:
    """A transient spinner on stderr naming the current step (off when quiet or no TTY).

    With ``--quiet`` rich is not imported at all (it costs ~0.1 s of start-up)."""
    enabled = False
    if not quiet:
        console = _stderr_console()
        enabled = console.is_terminal
    if not enabled:
        yield _TIMINGS.mark
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as prog:
        task = prog.add_task("starting", total=None)

        def step(name: str) -> None:
            _TIMINGS.mark(name)
            prog.update(task, description=name)

        yield step


def _check_args(args: argparse.Namespace) -> None:
    """Checks of option combinations and of --out, before any work is done."""
    if args.min_annotators is not None and args.rule != "at_least":
        raise _UsageError(
            f"--min-annotators only applies with --rule at_least (the rule is {args.rule}); "
            "add --rule at_least or drop --min-annotators"
        )
    if args.out:
        _check_out_dir(args.out)
        from toxeval.output_dir import check_outputs

        check_outputs(args.out, _output_names(args), _given_inputs(args))
    if getattr(args, "html", False) and not args.out:
        raise _UsageError("--html writes report.html into the --out directory: add --out DIR")
    if args.plots:
        if not args.out:
            raise _UsageError(
                f"--plots writes {' and '.join(PLOT_FILES)} into the --out directory: add --out DIR"
            )
        from toxeval.plots import _require_matplotlib

        try:
            _require_matplotlib()
        except ImportError as e:
            raise _UsageError(f"--plots: {e}") from None


def _output_names(args: argparse.Namespace) -> tuple[str, ...]:
    from toxeval.report import HTML_FILE, REPORT_FILES

    html = (HTML_FILE,) if getattr(args, "html", False) else ()
    return REPORT_FILES + html + (PLOT_FILES if args.plots else ())


def _given_inputs(args: argparse.Namespace) -> list[str | None]:
    """The files named on the command line that the run reads (those that are not
    files, e.g. registry names, are skipped by the check)."""
    return [
        getattr(args, "predictions", None),
        args.dataset,
        args.taxonomy,
        getattr(args, "mapping", None),
    ]


def _min_annotators(args: argparse.Namespace) -> int:
    return 1 if args.min_annotators is None else int(args.min_annotators)


def _check_out_dir(out: str) -> None:
    """--out must be a directory, or a path whose first existing ancestor is a writable
    directory: found out before reading and scoring, not after."""
    p = Path(out)
    if p.exists():
        if not p.is_dir():
            raise _UsageError(f"--out {out}: exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise _UsageError(f"--out {out}: the directory is not writable")
        return
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise _UsageError(f"--out {out}: {anc} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise _UsageError(f"--out {out}: cannot create it ({anc} is not writable)")


def _capture(args: argparse.Namespace) -> AbstractContextManager[list[_ScoredArrays]]:
    """With --plots: collect the arrays the figures were computed on (for the curves)."""
    if not args.plots:
        return nullcontext([])
    from toxeval.scoring import _capture_scored_arrays

    return _capture_scored_arrays()


def _write(
    result: EvaluationResult,
    args: argparse.Namespace,
    captured: list[_ScoredArrays],
    step: Callable[[str], None],
) -> list[Path]:
    """Write the --out files (and the --plots figures); return their paths."""
    step("writing outputs")
    if not args.out:
        return []
    from toxeval.output_dir import staged_outputs
    from toxeval.report import write_html_report, write_report_files

    names = _output_names(args)
    inputs = [*result.input_paths(), *_given_inputs(args)]
    try:
        with staged_outputs(args.out, names, inputs) as stage:
            write_report_files(result, stage)
            if getattr(args, "html", False):
                step("writing the HTML report")
                write_html_report(result, stage)
            if args.plots:
                step("plotting")
                _write_plots(result, captured, stage)
    except OSError as e:
        raise _UsageError(f"--out {args.out}: cannot write the results: {e}") from None
    return [Path(args.out) / name for name in names]


def _write_plots(result: EvaluationResult, captured: list[_ScoredArrays], out: Path) -> None:
    """pr_curves.png from the scored rows' labels, scores and mask (the rows and known
    cells every figure of ``result`` uses), and ap_by_category.png from ``result``."""
    from toxeval.plots import plot_ap_by_category, plot_pr_curves
    from toxeval.report import _system_line

    if len(captured) != 1:
        raise RuntimeError(f"expected the arrays of one scoring, got {len(captured)}")
    y, s, m = captured.pop()
    pr_png, ap_png = (out / name for name in PLOT_FILES)
    title = (
        f"Precision-recall per category (known labels only): {result.dataset['name']}, "
        f"{_system_line(result)}"
    )
    plot_pr_curves(y, s, m, result.config["taxonomy"]["ids"], pr_png, title=title)
    del y, s, m
    plot_ap_by_category(result, ap_png)


def _finish(result: EvaluationResult, args: argparse.Namespace, written: list[Path]) -> None:
    _TIMINGS.mark("writing outputs")  # the report printed below counts as writing outputs
    if args.quiet:
        f = result.figures
        print(
            f"mAP {f['map']:.4f}  label ranking loss {f['label_ranking_loss']:.4f}  "
            f"({result.counts['scored']} scored, {result.counts['excluded']} excluded)"
        )
    else:
        from rich.console import Console

        from toxeval.report import render

        render(result, Console())
        if written:
            print(f"wrote {', '.join(p.name for p in written)} to {args.out}")


def _cmd_evaluate(args: argparse.Namespace) -> int:
    _TIMINGS.mark("importing")
    from toxeval.scoring import evaluate

    _check_args(args)
    _system_arrow_pool()
    run: dict[str, Any] = {}
    if args.detector.strip().lower() != "lexicon" or args.run_file:
        if args.dry_run or args.batch_file:
            raise _UsageError("--dry-run and --batch-file belong to 'toxeval predict'")
        run_file = args.run_file or (str(Path(args.out) / "run.jsonl") if args.out else None)
        run = {"run_file": run_file, **_predict_options(args)}
    # the run's own progress bar replaces the step spinner (one live display at a time)
    with _progress(args.quiet or bool(run)) as step, _capture(args) as captured:
        result = evaluate(
            args.dataset,
            args.detector,
            taxonomy=args.taxonomy,
            threshold=args.threshold,
            data_dir=args.data_dir,
            rule=args.rule,
            min_annotators=_min_annotators(args),
            progress=step,
            **run,
        )
        written = _write(result, args, captured, step)
    _finish(result, args, written)
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    _TIMINGS.mark("importing")
    from toxeval.scoring import score

    _check_args(args)
    _system_arrow_pool()
    if args.batch_input:
        return _score_batch(args)
    with _progress(args.quiet) as step, _capture(args) as captured:
        result = score(
            args.predictions,
            args.dataset,
            taxonomy=args.taxonomy,
            threshold=args.threshold,
            parse_policy=args.parse_policy,
            on_mismatch=args.on_mismatch,
            format=args.format,
            mapping=args.mapping,
            data_dir=args.data_dir,
            rule=args.rule,
            min_annotators=_min_annotators(args),
            progress=step,
        )
        written = _write(result, args, captured, step)
    _finish(result, args, written)
    return 0


def _score_batch(args: argparse.Namespace) -> int:
    """A Batch API output, read through the sidecar of its input into a run file (kept as
    run.jsonl in --out, else temporary), then scored like any run file."""
    import tempfile

    from toxeval.datasets import load_dataset
    from toxeval.llm.batch import batch_run_file
    from toxeval.llm.runscores import score_run

    ds = load_dataset(
        args.dataset,
        taxonomy=args.taxonomy,
        data_dir=args.data_dir,
        rule=args.rule,
        min_annotators=_min_annotators(args),
    )
    with tempfile.TemporaryDirectory() as tmp:
        run_file = Path(args.out) / "run.jsonl" if args.out else Path(tmp) / "run.jsonl"
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            run_file.unlink(missing_ok=True)
        batch_run_file(args.predictions, args.batch_input, ds, run_file)
        with _progress(args.quiet) as step, _capture(args) as captured:
            result = score_run(run_file, ds, threshold=args.threshold, progress=step)
            written = _write(result, args, captured, step)
    _finish(result, args, written)
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from toxeval.datasets import list_datasets

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
    Console().print(table)
    return 0


def _cmd_taxonomy(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from toxeval.taxonomy import list_taxonomies, load_taxonomy

    tax = load_taxonomy(args.name)
    table = Table(
        title=escape(f"{tax.name} {tax.version} (K={tax.k})"),
        caption=escape(f"{tax.description}\nbuilt-in: {', '.join(list_taxonomies())}"),
        show_lines=True,
    )
    for col in ("id", "name", "definition", "aliases"):
        table.add_column(col)
    for c in tax.categories:
        table.add_row(*map(escape, (c.id, c.name, c.description, ", ".join(c.aliases))))
    Console().print(table)
    return 0


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "evaluate": _cmd_evaluate,
    "predict": _cmd_predict,
    "score": _cmd_score,
    "datasets": _cmd_datasets,
    "taxonomy": _cmd_taxonomy,
}


def _error(msg: str) -> None:
    line = " ".join(str(msg).split())  # one line, whatever the message holds
    print(f"{PROG}: error: {line}", file=sys.stderr)


def _no_hugepage_madvise() -> None:
    """Ask numpy not to madvise its large arrays into transparent huge pages.

    A command touches each of its large arrays about once, so huge pages save little,
    while with the kernel's usual ``defrag=madvise`` setting every huge-page fault on a
    busy machine with fragmented memory may stall in direct compaction: on the 1M-row
    benchmark that cost 0.5-1.5 s of system time (of a 3-6 s run). numpy's own switch,
    ``NUMPY_MADVISE_HUGEPAGE``, wins when the user sets it."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy < 2
        from numpy.core import multiarray  # type: ignore[no-redef,unused-ignore]
    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toxeval`` command; returns the exit code."""
    debug = os.environ.get("TOXEVAL_DEBUG", "") not in ("", "0")
    _TIMINGS.reset()
    _no_hugepage_madvise()
    try:
        args = _build_parser().parse_args(argv)
        command = args.command or "evaluate"
        if args.command is None:
            rest = list(sys.argv[1:] if argv is None else argv)
            args = _build_parser().parse_args(["evaluate", *rest])
        code = _COMMANDS[command](args)
        _TIMINGS.emit()
        return code
    except _UsageError as e:
        _error(str(e))
        return 2
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        # DatasetError, PredictionError, TaxonomyError and validation errors are ValueErrors.
        if debug:
            traceback.print_exc()
        _error(str(e) or type(e).__name__)
        return 2
    except KeyboardInterrupt as e:
        _error(str(e) or "interrupted")
        return 130
    except Exception as e:
        if debug:
            traceback.print_exc()
        _error(
            f"internal error: {type(e).__name__}: {e} "
            f"(rerun with TOXEVAL_DEBUG=1 for the traceback, and please report it)"
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
