"""The options of one run: :func:`toxeval.llm.predict`'s keyword arguments, checked once.

:func:`predict_options` turns the keywords into one frozen :class:`PredictOptions` and
raises the ValueError of the first bad one (the messages name the command line's flags);
every stage of the run (:mod:`toxeval.llm.plan`, the engine, the batch file) reads its
settings from it instead of a list of keywords. The checks that need the dataset (the
taxonomy a template is rendered with, the prompt or response level) are made where the
request spec is built (:func:`toxeval.llm.request_spec.build_request_spec`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toxeval.llm.detectors import DetectorSpec, parse_detector
from toxeval.llm.request_spec import Scoring, flags_text

if TYPE_CHECKING:
    from toxeval.datasets import Rule
    from toxeval.taxonomy import Taxonomy

__all__ = [
    "DEFAULT_BASE_URL",
    "DERIVED",
    "KEYWORDS",
    "PredictOptions",
    "check_positive",
    "check_rows",
    "checked_base_url",
    "predict_options",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

# the options only a local classifier (onnx:, hf:) takes
MODEL_OPTIONS = (
    "mapping",
    "batch_size",
    "batch_tokens",
    "max_length",
    "threads",
    "device",
    "dtype",
)
# the options only a model server takes (seed too, unless it draws a sample of rows)
SERVER_OPTIONS = (
    "base_url",
    "api_key_env",
    "scoring",
    "api",
    "structured",
    "samples",
    "template",
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "concurrency",
    "rpm",
    "tpm",
    "timeout",
    "request_deadline",
    "max_retries",
    "retry_base_delay",
)

# the options that build a request spec as a batch file's sidecar records them, in its
# order (and max_completion_tokens after them, when given; api is always chat there)
SIDECAR_OPTIONS = (
    "scoring",
    "template",
    "structured",
    "temperature",
    "max_tokens",
    "seed",
    "samples",
)


@dataclass(frozen=True)
class PredictOptions:
    """Every keyword of :func:`toxeval.llm.predict` (same names, same defaults), checked.

    ``timeout`` is always the (connect, read) pair; ``det`` is the parsed detector spec
    and ``url`` the checked base URL of a remote detector (``""`` for a local one)."""

    detector: str = "lexicon"
    run_file: str | Path = "run.jsonl"
    taxonomy: str | Path | Taxonomy | None = None
    data_dir: str | Path | None = None
    rule: Rule = "majority"
    min_annotators: int = 1
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    scoring: Scoring = "json"
    api: Literal["chat", "completions"] = "chat"
    structured: bool = False
    samples: int = 1
    template: str | Path | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    seed: int | None = None
    concurrency: int = 32
    rpm: float | None = None
    tpm: float | None = None
    timeout: tuple[float, float] = (10.0, 120.0)
    request_deadline: float = 600.0
    max_retries: int = 6
    retry_base_delay: float = 0.5
    limit: int | None = None
    sample: int | None = None
    dry_run: bool = False
    batch_file: str | Path | None = None
    quiet: bool = True
    mapping: str | Path | None = None
    batch_size: int = 32
    batch_tokens: int | None = None
    max_length: int | None = None
    threads: int | None = None
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["float32", "float16", "bfloat16"] = "float32"
    det: DetectorSpec | None = None
    url: str = ""

    @property
    def spec(self) -> DetectorSpec:
        """The parsed detector spec."""
        assert self.det is not None, "PredictOptions are built by predict_options"
        return self.det

    def given(self, names: tuple[str, ...] | list[str]) -> list[str]:
        """The names among ``names`` whose value is not the default."""
        defaults = {f.name: f.default for f in fields(self)}
        return [n for n in names if getattr(self, n) != defaults[n]]

    def request_options(self) -> dict[str, Any]:
        """The keywords of :func:`toxeval.llm.request_spec.build_request_spec`."""
        names = (*SIDECAR_OPTIONS, "max_completion_tokens", "api")
        return {n: getattr(self, n) for n in names}

    def model_options(self) -> dict[str, Any]:
        """The keywords of :class:`toxeval.classifiers.ModelOptions`."""
        return {n: getattr(self, n) for n in MODEL_OPTIONS}

    def chat_options(self) -> dict[str, Any]:
        """The options a batch file's sidecar records (the ones that build its requests)."""
        out: dict[str, Any] = {n: getattr(self, n) for n in SIDECAR_OPTIONS}
        if self.template is not None:
            out["template"] = str(self.template)
        if self.max_completion_tokens is not None:  # sidecars without it read as before
            out["max_completion_tokens"] = self.max_completion_tokens
        return out


# the fields predict_options derives from the keywords: no keyword of predict, no flag
DERIVED = ("det", "url")
# every keyword of predict but the dataset, in the order of its signature: the names of
# the command line's runner flags too (toxeval.cli.run_options reads them by these names)
KEYWORDS = tuple(f.name for f in fields(PredictOptions) if f.name not in DERIVED)


def checked_base_url(url: str) -> str:
    """``url`` without its trailing slash, or a ValueError when it is not an http(s) URL
    with a host (--base-url)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as e:
        raise ValueError(f"--base-url {url!r} is not a URL: {e}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"--base-url {url!r}: give an http:// or https:// URL with a host")
    return url.rstrip("/")


def check_positive(name: str, value: Any, flag: str, *, integer: bool = False) -> None:
    """A ValueError naming ``flag`` unless ``value`` is a number (an integer) > 0."""
    bad = isinstance(value, bool) or not isinstance(value, (int, float) if not integer else int)
    if bad or not value > 0:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind} > 0 ({flag}), got {value!r}")


def check_rows(limit: int | None, sample: int | None) -> None:
    """The checks of ``limit=`` (``--limit``) and ``sample=`` (``--sample``)."""
    if limit is not None and sample is not None:
        raise ValueError("limit= (--limit) and sample= (--sample) cannot be combined: pick one")
    if limit is not None:
        check_positive("limit", limit, "--limit", integer=True)
    if sample is not None:
        check_positive("sample", sample, "--sample", integer=True)


def _timeouts(timeout: float | tuple[float, float]) -> tuple[float, float]:
    pair = timeout if isinstance(timeout, tuple) else (timeout, timeout)
    for v in pair:
        check_positive("timeout", v, "--timeout")
    return float(pair[0]), float(pair[1])


def predict_options(**keywords: Any) -> PredictOptions:
    """:func:`toxeval.llm.predict`'s keywords (but ``dataset``) as checked
    :class:`PredictOptions`: a ValueError for the first bad one."""
    opts = PredictOptions(**keywords)
    det = parse_detector(opts.detector)
    if not det.classifier:
        given = opts.given(MODEL_OPTIONS)
        if given:
            raise ValueError(
                f"{flags_text(given)} apply to local classifiers (onnx:, hf:), "
                f"not to {opts.detector!r}"
            )
    check_positive("concurrency", opts.concurrency, "--concurrency", integer=True)
    max_retries = opts.max_retries
    if max_retries < 0 or isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise ValueError(
            f"max_retries must be an integer >= 0 (--max-retries), got {max_retries!r}"
        )
    for name, v, flag in (("rpm", opts.rpm, "--rpm"), ("tpm", opts.tpm, "--tpm")):
        if v is not None:
            check_positive(name, v, flag)
    timeout = _timeouts(opts.timeout)
    check_positive("request_deadline", opts.request_deadline, "--request-deadline")
    check_rows(opts.limit, opts.sample)
    opts = _replace(opts, det=det, timeout=timeout)
    if not det.remote:
        if opts.dry_run or opts.batch_file is not None:
            raise ValueError(
                f"dry_run and batch_file apply to API detectors, not {opts.detector!r}"
            )
        # without --sample the seed would only go to a model
        server = SERVER_OPTIONS if opts.sample is not None else (*SERVER_OPTIONS, "seed")
        given = opts.given(server)
        if given:
            raise ValueError(
                f"{flags_text(given)} apply to model servers; {opts.detector!r} runs in this "
                "process: drop them"
            )
        return opts
    url = opts.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return _replace(opts, url=checked_base_url(url))


def _replace(opts: PredictOptions, **changes: Any) -> PredictOptions:
    from dataclasses import replace

    return replace(opts, **changes)
