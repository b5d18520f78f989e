"""The ``toxeval`` command line's arguments: the parser of every subcommand (evaluate,
predict, score, datasets, taxonomy) and :class:`UsageError`, the bad usage that exits
with code 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, NoReturn

from toxeval.report import REPORT_FILES

if TYPE_CHECKING:
    pass


PROG = "toxeval"


PLOT_FILES = ("pr_curves.png", "ap_by_category.png")


class UsageError(Exception):
    """Bad command-line usage (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _version() -> str:
    from toxeval._core import __version__

    return str(__version__)


def build_parser() -> argparse.ArgumentParser:
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
            "--operating-point",
            metavar="KIND=RATE",
            help="per category, the threshold that reaches precision=P, recall=R or fpr=F on "
            "these rows, and the rates there (docs/cli.md, thresholds)",
        )
        sp.add_argument(
            "--thresholds-from",
            metavar="FILE|DIR",
            help="per-category thresholds chosen elsewhere (a thresholds file, or a results "
            "folder written with --operating-point): the rates at them on these rows",
        )
        sp.add_argument(
            "--prices",
            metavar="FILE",
            help="a price table (TOML or JSON: USD per 1M input, output and reasoning tokens "
            "per model; none is shipped): the cost of a run file's answers, in all and per "
            "1,000 items (docs/llm.md, latency and cost)",
        )
        sp.add_argument(
            "--slice-by",
            action="append",
            default=None,
            metavar="COLUMN",
            help="every headline figure per value of a dataset column (e.g. language, "
            "source, or the built-in text_length buckets), with its interval and row count; "
            "repeatable (docs/cli.md, slices)",
        )
        sp.add_argument(
            "--out",
            metavar="DIR",
            help=f"write {', '.join(REPORT_FILES[:-1])} and {REPORT_FILES[-1]} (the scored "
            "rows: what 'toxeval compare' reads) into DIR",
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
            "--bootstrap",
            type=int,
            default=1000,
            metavar="N",
            help="resamples of the scored rows for the 95%% intervals of mAP, label ranking "
            "loss and per-category AP (default 1000, from 2 to 100000; 0: no intervals)",
        )
        sp.add_argument(
            "--bootstrap-seed",
            type=int,
            default=0,
            metavar="S",
            help="seed of the resamples (default 0): the same seed gives the same intervals",
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
        help="lexicon (default), openai:MODEL, openai-moderation[:MODEL], llama-guard:MODEL, "
        "policy-guard:MODEL (one request per category), python:module:attr, onnx:DIR (an ONNX sequence classifier) or hf:DIR (transformers)",
    )
    ev.add_argument(
        "--run-file",
        metavar="FILE",
        help="keep the answers in this run file (default: run.jsonl in --out; resumable)",
    )
    _model_options(ev)
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
        dest="run_file",  # the name of predict's keyword (toxeval.cli.run_options)
        metavar="RUNFILE",
        help="the run file answers are appended to (rerun to resume); not with --batch-file",
    )
    pr.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _model_options(pr)
    _llm_options(pr)

    sc = sub.add_parser("score", help="score an existing prediction dump")
    sc.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="JSONL/CSV/Parquet/NPY/NPZ file, or a directory of Parquet shards (scored out of "
        "core; --dataset the same path when the shards hold the labels too)",
    )
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
        "--memory-limit",
        metavar="SIZE",
        default=None,
        help="score out of core with memory bounded by SIZE (e.g. 2GB, 512MiB): Parquet "
        "inputs stream through mergeable states, spilling to disk (docs/out-of-core.md). "
        "Out of core without it too for a directory of shards or a Parquet file over "
        "the default limit (2 GiB, or half the available memory). With --dask-*: the "
        "memory each worker may use for the metric states (docs/dask.md)",
    )
    sc.add_argument(
        "--dask-scheduler",
        metavar="ADDRESS",
        default=None,
        help="join and score on the Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786); "
        "predictions are Parquet (a file or a directory of shards) with an id column and "
        "one score column per category (docs/dask.md; needs toxeval[dask])",
    )
    sc.add_argument(
        "--dask-local",
        metavar="N",
        type=int,
        default=None,
        help="like --dask-scheduler, on a local cluster of N worker processes (127.0.0.1)",
    )
    sc.add_argument(
        "--dask-timeout",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="seconds to reach the Dask scheduler, and to wait for one that stops "
        "answering before failing (default 30)",
    )
    sc.add_argument(
        "--spill-dir",
        metavar="DIR",
        default=None,
        help="where out-of-core scoring writes its temporary spill files (default: the "
        "system's temporary folder)",
    )
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

    cp = sub.add_parser(
        "compare",
        help="datasets x systems table of mAP and label ranking loss with bootstrap "
        "intervals and paired tests, from results folders",
    )
    cp.add_argument("results", nargs="+", metavar="[NAME=]DIR", help="results folders (--out)")
    cp.add_argument("--baseline", metavar="NAME", help="system the others are tested against")
    cp.add_argument(
        "--format",
        choices=("table", "markdown", "latex", "csv"),
        default="table",
        help="output format (default: a terminal table)",
    )
    cp.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="resamples (1000)")
    cp.add_argument("--seed", type=int, default=0, help="resampling seed (0)")
    cp.add_argument("--html", metavar="FILE", help="also write the comparison as one HTML page")
    cp.add_argument(
        "--common-rows",
        action="store_true",
        help="compare the systems of a dataset on the items all of them scored (e.g. a run "
        "file with failed rows), instead of refusing systems that scored different items; "
        "the output says how many rows each system left out",
    )
    cp.add_argument(
        "--fail-if-worse",
        metavar="FIGURES",
        action="append",
        help="regression gate: exit 1 when a system is worse than --baseline by more than "
        "--margin on any of FIGURES (comma-separated: map, lrl, ap:CATEGORY; repeatable), by "
        "a one-sided paired bootstrap test, Holm-adjusted over every test (alpha 0.05); an "
        "untestable figure fails too",
    )
    cp.add_argument(
        "--margin",
        type=float,
        default=None,
        metavar="M",
        help="--fail-if-worse tolerates a drop of up to M, in the figure's units (0.01 is "
        "one point of mAP; default 0)",
    )
    th = sub.add_parser(
        "thresholds",
        help="per-category thresholds for a target precision, recall or false-positive "
        "rate from a results folder, or the rates of thresholds chosen elsewhere",
    )
    th.add_argument("results", metavar="[NAME=]DIR", help="a results folder (--out)")
    th.add_argument(
        "--operating-point",
        metavar="KIND=RATE",
        help="choose each category's threshold: precision=P (lowest threshold with precision "
        ">= P), recall=R (highest with recall >= R) or fpr=F (lowest with FPR <= F)",
    )
    th.add_argument(
        "--apply",
        metavar="FILE|DIR",
        help="measure on DIR the thresholds of a thresholds file, or of a results folder "
        "written with --operating-point",
    )
    th.add_argument(
        "--write", metavar="FILE", help="save the chosen thresholds as a JSON file a service loads"
    )
    return p


def _model_options(sp: argparse.ArgumentParser) -> None:
    """The options of a local classifier (docs/cli.md, "Local classifiers")."""
    g = sp.add_argument_group("local classifiers (onnx:DIR, hf:DIR)")
    g.add_argument(
        "--mapping",
        metavar="NAME|FILE",
        help="the model's labels -> taxonomy ids (shipped: see 'toxeval taxonomy'; default: "
        "the shipped mapping that covers the model's labels)",
    )
    g.add_argument(
        "--batch-size", type=int, default=32, metavar="N", help="texts per forward pass (32)"
    )
    g.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        metavar="N",
        help="padded tokens per batch at most (default: 512 on a CPU, no limit on a GPU)",
    )
    g.add_argument(
        "--max-length",
        type=int,
        default=None,
        metavar="N",
        help="tokens kept per text (default: the model's limit); longer texts are cut and counted",
    )
    g.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="ONNX Runtime intra-op threads (default: one per physical core)",
    )
    g.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where hf: runs (auto: cuda when available)",
    )
    g.add_argument(
        "--dtype",
        choices=("float32", "float16", "bfloat16"),
        default="float32",
        help="what hf: computes in (float16 / bfloat16 on a CUDA device only)",
    )


def _llm_options(sp: argparse.ArgumentParser) -> None:
    """The options of a run through an API (docs/cli.md, "Running LLMs")."""
    g = sp.add_argument_group(
        "API detectors (openai:, openai-moderation, llama-guard:, policy-guard:)"
    )
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
        "--api",
        choices=("chat", "completions"),
        default="chat",
        help="chat: /chat/completions (default); completions: a guard's prompt rendered by "
        "toxeval and sent raw to /completions (llama-guard:, policy-guard:; vLLM, llama.cpp, TGI)",
    )
    g.add_argument(
        "--structured", action="store_true", help="ask for a JSON schema (response_format)"
    )
    g.add_argument("--samples", type=int, default=1, metavar="N", help="answers per item (sample)")
    g.add_argument("--template", metavar="NAME|FILE", help="prompt template (shipped name or file)")
    g.add_argument("--temperature", type=float, default=None)
    g.add_argument("--max-tokens", type=int, default=None, metavar="N")
    g.add_argument(
        "--max-completion-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the token limit as OpenAI's reasoning models take it (o-series, GPT-5), "
        "instead of --max-tokens",
    )
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
    g.add_argument(
        "--request-deadline",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds one attempt may take in all, the whole answer included, however "
        "the server trickles it (default 600); past it the attempt is a timeout",
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


def timeout_arg(text: str) -> float | tuple[float, float]:
    try:
        parts = [float(p) for p in str(text).split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return (parts[0], parts[1])
    raise UsageError(f"--timeout {text}: give seconds, or CONNECT,READ seconds")
