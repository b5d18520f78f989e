"""The ``--out`` folder of a command: its checks before any work (writable, not an input),
the files written through a staged folder (results.json, report.md, per_category.csv,
scored rows, the HTML report, the ``--plots`` figures), and the report printed at the
end.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toxeval.cli.parser import PLOT_FILES, UsageError
from toxeval.cli.progress import TIMINGS

if TYPE_CHECKING:
    from toxeval.scoring import EvaluationResult

# an output path that is a symbolic link whose target is not there: writing the outputs
# would replace the link (or, for a loop, fail) after all the work
LINK_TO_NOTHING = "a symbolic link to nothing (its target is missing, or the link is a loop)"


def check_args(args: argparse.Namespace) -> None:
    """Checks of option combinations and of --out, before any work is done."""
    if args.min_annotators is not None and args.rule != "at_least":
        raise UsageError(
            f"--min-annotators only applies with --rule at_least (the rule is {args.rule}); "
            "add --rule at_least or drop --min-annotators"
        )
    from toxeval.scoring.intervals import CLI_NAMES, check_options

    try:
        check_options(args.bootstrap, args.bootstrap_seed, 0.95, names=CLI_NAMES)
    except ValueError as e:
        raise UsageError(str(e)) from None
    _check_operating_points(args)
    _check_prices(args)
    if args.out:
        _check_out_dir(args.out)
        from toxeval.output_dir import check_outputs

        check_outputs(args.out, _output_names(args), _given_inputs(args))
    if getattr(args, "html", False) and not args.out:
        raise UsageError("--html writes report.html into the --out directory: add --out DIR")
    if args.plots:
        if not args.out:
            raise UsageError(
                f"--plots writes {' and '.join(PLOT_FILES)} into the --out directory: add --out DIR"
            )
        from toxeval.plots import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as e:
            raise UsageError(f"--plots: {e}") from None


def _output_names(args: argparse.Namespace) -> tuple[str, ...]:
    from toxeval.report import HTML_FILE, REPORT_FILES

    if getattr(args, "out_of_core", None):
        return REPORT_FILES[:3]  # no scored rows, HTML page or figures out of core
    from toxeval.slices import SLICES_FILE

    html = (HTML_FILE,) if getattr(args, "html", False) else ()
    sliced = (SLICES_FILE,) if getattr(args, "slice_by", None) else ()
    return REPORT_FILES + sliced + html + (PLOT_FILES if args.plots else ())


def _given_inputs(args: argparse.Namespace) -> list[str | None]:
    """The files named on the command line that the run reads (those that are not
    files, e.g. registry names, are skipped by the check)."""
    source = getattr(args, "thresholds_from", None)
    if source is not None and Path(source).is_dir():
        source = str(Path(source) / "results.json")  # what is read of a results folder
    return [
        getattr(args, "predictions", None),
        args.dataset,
        args.taxonomy,
        getattr(args, "mapping", None),
        source,
    ]


def _check_out_dir(out: str) -> None:
    """--out must be a directory, or a path whose first existing ancestor is a writable
    directory: found out before reading and scoring, not after."""
    p = Path(out)
    if p.is_symlink() and not p.exists():
        raise UsageError(f"--out {out}: {LINK_TO_NOTHING}")
    if p.exists():
        if not p.is_dir():
            raise UsageError(f"--out {out}: exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"--out {out}: the directory is not writable")
        return
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise UsageError(f"--out {out}: {anc} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: cannot create it ({anc} is not writable)")


def _check_operating_points(args: argparse.Namespace) -> None:
    """--operating-point and --thresholds-from, read before any work (one of them)."""
    from toxeval.operating_points import parse_target, thresholds_of

    args.op_target = args.op_thresholds = None
    target, source = getattr(args, "operating_point", None), getattr(args, "thresholds_from", None)
    if target is not None and source is not None:
        raise UsageError(
            "give --operating-point (choose thresholds here) or --thresholds-from (measure "
            "thresholds chosen elsewhere), not both"
        )
    try:
        if target is not None:
            args.op_target = parse_target(target)
        if source is not None:
            args.op_thresholds = thresholds_of(source)
    except ValueError as e:
        raise UsageError(f"--thresholds-from {e}" if source is not None else str(e)) from None
    if args.op_thresholds and getattr(args, "taxonomy", None):
        _check_threshold_categories(args.op_thresholds, args.taxonomy, str(source))


def _check_threshold_categories(thresholds: dict[str, Any], taxonomy: str, source: str) -> None:
    """With --taxonomy given, a category of --thresholds-from it does not have is refused
    before any work (a model run is not spent to be refused at the end); without it the
    taxonomy is the dataset's, checked once it is loaded (:func:`add_operating_points`)."""
    from toxeval.taxonomy import load_taxonomy

    try:
        ids = set(load_taxonomy(taxonomy).ids)
    except (OSError, ValueError):
        return  # a bad --taxonomy is reported where the dataset is loaded
    unknown = sorted(set(thresholds) - ids)
    if unknown:
        raise UsageError(
            f"--thresholds-from {source}: categories the taxonomy {taxonomy} does not have: "
            f"{', '.join(unknown)}"
        )


def _check_prices(args: argparse.Namespace) -> None:
    """--prices, read and checked before any work."""
    args.prices_table = None
    if getattr(args, "prices", None) is None:
        return  # no import of the LLM package (35 ms) for a score without --prices
    from toxeval.llm.prices import PriceError, price_block, read_prices

    try:
        args.prices_table = read_prices(args.prices)
    except PriceError as e:
        raise UsageError(f"--prices {e}") from None
    known, model = _model_to_price(args)
    if known and (model is None or model not in args.prices_table):
        try:  # the same message as after scoring, before any request is sent
            price_block({"billable": {}}, args.prices_table, model, str(args.prices))
        except PriceError as e:
            raise UsageError(str(e)) from None


def _model_to_price(args: argparse.Namespace) -> tuple[bool, str | None]:
    """(known?, model) of what --prices will price, where it can be told before any
    work: the model evaluate's --detector names. A score of predictions that are not a
    run file is refused here. Otherwise (a run file's current model is in its last
    header) it is checked after scoring, from the run's fingerprint."""
    detector = getattr(args, "detector", None)
    if isinstance(detector, str):
        from toxeval.llm.detectors import parse_detector

        try:
            spec = parse_detector(detector)
        except (TypeError, ValueError):
            return False, None  # the run refuses it with its own message
        if spec.model is not None:
            return True, spec.model
        if not spec.remote:
            return True, None  # a local detector: no model priced per token
        return False, None  # a default model (openai-moderation): named by the run
    predictions = getattr(args, "predictions", None)
    if predictions is not None and not getattr(args, "batch_input", None):
        from toxeval.llm.runfile import is_run_file

        if not is_run_file(predictions):
            raise UsageError(
                "--prices prices the answers of a run file (toxeval predict, or evaluate "
                "with --detector); these predictions record no token usage"
            )
    return False, None


def add_prices(result: EvaluationResult, args: argparse.Namespace) -> None:
    """The cost of a run's answers at the --prices table, into its ``cost`` block."""
    table = getattr(args, "prices_table", None)
    if table is None:
        return
    if result.cost is None:
        raise UsageError(
            "--prices prices the answers of a run file (toxeval predict, or evaluate with "
            "--detector); these predictions record no token usage"
        )
    from toxeval.llm.prices import PriceError, price_block

    model = (result.system.get("fingerprint") or {}).get("model")
    try:
        result.cost["prices"] = price_block(result.cost, table, model, str(args.prices))
    except PriceError as e:
        raise UsageError(str(e)) from None


def add_operating_points(result: EvaluationResult, args: argparse.Namespace) -> None:
    """The operating points asked for (:mod:`toxeval.operating_points`), from the rows
    the figures were computed on, into ``result``."""
    target, given = getattr(args, "op_target", None), getattr(args, "op_thresholds", None)
    if target is None and given is None:
        return
    from toxeval import operating_points as op

    rows = result.rows
    if rows is None:
        raise UsageError(
            "--operating-point and --thresholds-from need the scored rows in memory; this "
            "run scores out of core or on Dask"
        )
    cats = list(result.config["taxonomy"]["ids"])  # the columns of the rows
    source = f"--thresholds-from {args.thresholds_from}"
    try:
        points = op.points_for(
            rows.y_true,
            rows.scores,
            rows.mask,
            cats,
            target=target,
            thresholds=given,
            source=source,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    from_ = None if given is None else str(args.thresholds_from)
    result.operating_points = op.section(points, target=target, thresholds_from=from_)


def sliced_dataset(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """With ``--slice-by``: the dataset, loaded once (with ``options``) before any other
    work, its slice columns checked (exit 2 naming the columns there); else None."""
    if not getattr(args, "slice_by", None):
        return None
    from toxeval.datasets import load_dataset
    from toxeval.slices import check_slice_columns

    ds = load_dataset(args.dataset, **options)
    try:
        check_slice_columns(ds, args.slice_by)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return ds


def add_slices(
    result: EvaluationResult, ds: Any, args: argparse.Namespace, options: dict[str, Any]
) -> None:
    """The slices asked for (:mod:`toxeval.slices`) into ``result``; the dataset was
    loaded by :func:`sliced_dataset` with ``options``, which the config records."""
    if ds is None:
        return
    from toxeval.slices import add_slices as slices_of

    for key in ("rule", "min_annotators"):
        if key in result.config:
            result.config[key] = options[key]
    slices_of(result, ds, args.slice_by, n_resamples=args.bootstrap, seed=args.bootstrap_seed)


def write_out_folder(
    result: EvaluationResult,
    args: argparse.Namespace,
    step: Callable[[str], None],
) -> list[Path]:
    """Add the operating points asked for, then write the --out files (and the --plots
    figures); return their paths."""
    add_operating_points(result, args)
    add_prices(result, args)
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
                _write_plots(result, stage)
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot write the results: {e}") from None
    return [Path(args.out) / name for name in names]


def _write_plots(result: EvaluationResult, out: Path) -> None:
    """pr_curves.png from the scored rows' labels, scores and mask (the rows and known
    cells every figure of ``result`` uses), and ap_by_category.png from ``result``."""
    from toxeval.plots import plot_ap_by_category, plot_pr_curves
    from toxeval.report import system_line

    if result.rows is None:
        raise RuntimeError("the result does not carry its scored rows")
    y, s, m = result.rows.y_true, result.rows.scores, result.rows.mask
    pr_png, ap_png = (out / name for name in PLOT_FILES)
    title = (
        f"Precision-recall per category (known labels only): {result.dataset['name']}, "
        f"{system_line(result)}"
    )
    reasons = [c.get("ap_undefined_reason") for c in result.per_category]
    plot_pr_curves(
        y, s, m, result.config["taxonomy"]["ids"], pr_png, title=title, ap_undefined_reasons=reasons
    )
    del y, s, m
    plot_ap_by_category(result, ap_png)


def finish_command(result: EvaluationResult, args: argparse.Namespace, written: list[Path]) -> None:
    TIMINGS.mark("writing outputs")  # the report printed below counts as writing outputs
    if args.quiet:
        from toxeval.report import quiet_line

        print(quiet_line(result))
    else:
        from toxeval.console_output import output_console
        from toxeval.report import render

        render(result, output_console())
        if written:
            print(f"wrote {', '.join(p.name for p in written)} to {args.out}")
