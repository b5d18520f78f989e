"""OpenAI Batch API files, and ``--dry-run``.

``write_batch_file`` writes one line per request in the Batch API input format
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``) instead of
sending it, and beside it a sidecar ``FILE.toxeval.json`` that records how the requests
were made: detector, base URL, fingerprint, the options that built the request spec,
the dataset's sha256 and the ids sent. ``custom_id`` is ``"<unit>.<call>.<digest>"``: the
position of the request in that plan and the first 16 hex digits of the sha256 of its
path and body, so that an output line answers one request of this input and no other
(the output of another batch of the same shape, or of this file written again with other
rows or options, is refused instead of giving its answers to the wrong rows).

``batch_run_file`` reads the Batch API output (``{"custom_id", "response": {"status_code",
"body"}, "error"}``) with the sidecar of the input file, rebuilds the same plan, reads the
answers with :func:`toxeval.llm.requests.read` and writes them as a run file, so that the
report is the one a live run gives (the request hashes are the live run's too). A request
without a 200 answer in the output makes its items failed rows (unscored); a line whose
``custom_id`` is not a request of the input, or that repeats another line's, is an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toxeval.llm.error_bodies import in_band_detail, in_band_error
from toxeval.llm.plan import Key, Planned, plan_remote
from toxeval.llm.progress import RunSummary
from toxeval.llm.rows import UnitReplies, failed_row, header_line, read_answers, write_answers
from toxeval.llm.runfile import RunFileError, RunWriter, canonical_json

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.detectors import DetectorSpec
    from toxeval.llm.requests import RequestSpec

__all__ = [
    "batch_run_file",
    "dry_run_summary",
    "openai_limits_note",
    "sidecar_path",
    "write_batch_file",
]

# What OpenAI's Batch API takes in one input file (its file-upload checks); other servers
# that read the format may take more.
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200_000_000  # "200 MB" as OpenAI documents it

BATCH_FORMAT = 2  # 1: custom_id "<unit>.<call>", without the digest (still read)
SIDECAR_KEYS = ("detector", "base_url", "fingerprint", "options", "dataset", "ids")


def sidecar_path(batch_file: str | Path) -> Path:
    p = Path(batch_file)
    return p.with_name(p.name + ".toxeval.json")


def dry_run_summary(spec: RequestSpec, keys: Sequence[Key], base_url: str, path: str) -> RunSummary:
    """How many requests the run would send and their estimated prompt tokens
    (:func:`toxeval.llm.requests.estimate_prompt_tokens`); nothing is sent or written."""
    from toxeval.llm.requests import estimate_prompt_tokens

    requests = tokens = 0
    for p in plan_remote(spec, keys, base_url):
        requests += len(p.unit.calls)
        tokens += sum(estimate_prompt_tokens(c) for c in p.unit.calls)
    return RunSummary(
        path=path, items=len(keys), requests=requests, prompt_tokens=tokens, dry_run=True
    )


def _url_path(base_url: str, path: str) -> str:
    """The Batch API ``url``: the request path under ``/v1``."""
    return "/v1" + path


def custom_id(unit: int, call: int, path: str, body: dict[str, Any], fmt: int) -> str:
    """The ``custom_id`` of call ``call`` of unit ``unit`` (see the module docstring)."""
    if fmt == 1:
        return f"{unit}.{call}"
    digest = hashlib.sha256(canonical_json([path, body]).encode("utf-8")).hexdigest()
    return f"{unit}.{call}.{digest[:16]}"


def openai_limits_note(batch_file: str | Path, requests: int) -> str | None:
    """A note when ``batch_file`` is over what OpenAI's Batch API takes in one file
    (:data:`OPENAI_MAX_REQUESTS` requests, :data:`OPENAI_MAX_BYTES` bytes), else None."""
    size = Path(batch_file).stat().st_size
    if requests <= OPENAI_MAX_REQUESTS and size <= OPENAI_MAX_BYTES:
        return None
    return (
        f"{batch_file} holds {requests} requests ({size / 1e6:.1f} MB); OpenAI's Batch "
        f"API takes at most {OPENAI_MAX_REQUESTS} requests and {OPENAI_MAX_BYTES // 10**6} "
        "MB per file: for OpenAI, write one file per part of the dataset (each part keeps "
        "its own sidecar to score its output)"
    )


def write_batch_file(
    spec: RequestSpec,
    keys: Sequence[Key],
    base_url: str,
    batch_file: str | Path,
    *,
    detector: DetectorSpec,
    dataset: Dataset,
    options: dict[str, Any],
) -> RunSummary:
    """Write the Batch API input file and its sidecar, replacing those of an earlier
    batch; any other existing file of either name (the dataset, a run file) is an
    error and is kept. Both are written to temporary files first and renamed into
    place."""
    out = Path(batch_file)
    _check_target(out, dataset)
    template = options.get("template")
    if isinstance(template, str) and Path(template).is_file():
        # scoring may run from another folder: the sidecar names the file it can find
        options = {**options, "template": str(Path(template).resolve())}
    from toxeval.llm.requests import public_url
    from toxeval.output_dir import staged_file

    sidecar = {
        "toxeval_batch": BATCH_FORMAT,
        "detector": detector.text,
        "base_url": public_url(base_url),  # a password in it is written nowhere
        "fingerprint": spec.fingerprint(),
        "options": options,
        "dataset": {"name": dataset.name, "sha256": dataset.sha256},
        "ids": [k[0] for k in keys],
    }
    # both files are written whole before either is renamed into place
    try:
        with staged_file(out) as f:
            n = _write_requests(f, spec, keys, base_url)
            with staged_file(sidecar_path(out)) as g:
                g.write(json.dumps(sidecar, indent=1) + "\n")
    except OSError as e:  # a full disk, a read-only file system: neither file is left
        raise ValueError(f"--batch-file {out}: cannot write it: {e.strerror}") from None
    return RunSummary(path=str(out), items=len(keys), requests=n)


def _write_requests(f: IO[str], spec: RequestSpec, keys: Sequence[Key], base_url: str) -> int:
    """One Batch API request a line into ``f``; returns how many."""
    n = 0
    for ui, p in enumerate(plan_remote(spec, keys, base_url)):
        for ci, call in enumerate(p.unit.calls):
            line = {
                "custom_id": custom_id(ui, ci, call.path, call.body, BATCH_FORMAT),
                "method": "POST",
                "url": _url_path(base_url, call.path),
                "body": call.body,
            }
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            n += 1
    return n


def _is_sidecar(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "toxeval_batch" in data


def _check_target(out: Path, dataset: Dataset) -> None:
    """A ValueError unless ``out`` and its sidecar may be written: neither names the
    dataset or taxonomy file read, and an existing ``out`` is a batch input toxeval
    wrote (it has a sidecar), as is an existing sidecar."""
    side = sidecar_path(out)
    for name, source in (("dataset", dataset.source), ("taxonomy", dataset.taxonomy.source)):
        p = Path(source) if source and not source.startswith("built-in:") else None
        if p is not None and p.is_file() and any(t.exists() and t.samefile(p) for t in (out, side)):
            raise ValueError(
                f"--batch-file {out}: it would overwrite the {name} file {p}; choose another name"
            )
    if out.is_symlink() and not out.exists():  # writing would replace the link
        raise ValueError(
            f"--batch-file {out}: a symbolic link to nothing (its target is missing, or the "
            "link is a loop)"
        )
    if out.is_dir():
        raise ValueError(f"--batch-file {out}: is a directory; give a file name")
    if side.exists() and not _is_sidecar(side):
        raise ValueError(
            f"--batch-file {out}: {side} exists and is not a toxeval batch sidecar; it is "
            "kept: choose another name"
        )
    if out.exists() and not side.exists():
        raise ValueError(
            f"--batch-file {out}: the file exists and is not a batch input toxeval wrote (it "
            f"has no sidecar {side.name}); it is kept: choose another name, or remove it"
        )


def read_sidecar(batch_input: str | Path) -> dict[str, Any]:
    side = sidecar_path(batch_input)
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFileError(
            f"{side}: not found; it is written by 'toxeval predict --batch-file "
            f"{batch_input}' beside the batch input file"
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        raise RunFileError(f"{side}: cannot read it: {e}") from None
    if not isinstance(data, dict) or data.get("toxeval_batch") not in (1, BATCH_FORMAT):
        raise RunFileError(f"{side}: not a toxeval batch sidecar")
    ok = (
        all(k in data for k in SIDECAR_KEYS)
        and isinstance(data["detector"], str)
        and isinstance(data["base_url"], str)
        and isinstance(data["fingerprint"], dict)
        and isinstance(data["options"], dict)
        and isinstance(data["dataset"], dict)
        and isinstance(data["dataset"].get("name"), str)
        and isinstance(data["dataset"].get("sha256"), str)
        and isinstance(data["ids"], list)
    )
    if not ok:
        raise RunFileError(
            f"{side}: not a complete toxeval batch sidecar (it needs "
            f"{', '.join(SIDECAR_KEYS)}); it is written by 'toxeval predict --batch-file'"
        )
    return data


def _outputs(
    path: Path, batch_input: str | Path
) -> dict[str, tuple[int, dict[str, Any] | None, str | None]]:
    """custom_id -> (line number, 200 body or None, error message or None)."""
    out: dict[str, tuple[int, dict[str, Any] | None, str | None]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RunFileError(f"{path}: cannot read the batch output: {e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise RunFileError(f"{path}: line {n} is not JSON") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
            raise RunFileError(f"{path}: line {n} has no custom_id (not a Batch API output)")
        if "response" not in obj and "error" not in obj and "body" in obj:
            raise RunFileError(
                f"{path}: line {n} is a Batch API request, not an answer: give the output "
                f"file the Batch API returned for {batch_input}"
            )
        cid = obj["custom_id"]
        if cid in out:
            raise RunFileError(
                f"{path}: custom_id {cid!r} is on lines {out[cid][0]} and {n}; a Batch API "
                "output answers each request once (were two outputs joined?)"
            )
        resp = obj.get("response")
        err = obj.get("error")
        body = resp.get("body") if isinstance(resp, dict) else None
        status = resp.get("status_code") if isinstance(resp, dict) else None
        if status == 200 and isinstance(body, dict) and in_band_error(body) is None:
            out[cid] = (n, body, None)
        elif status == 200 and isinstance(body, dict):
            # an error in a 200 body (a provider's failure, no choice): not the model's
            # answer, so a failed row as in a live run, not an unparseable one
            said = in_band_detail(body, json.dumps(body).encode())
            out[cid] = (n, None, f"batch request failed: HTTP 200 with an error: {said}")
        else:
            out[cid] = (n, None, f"batch request failed: {_failure(status, body, err)}")
    return out


def _failure(status: Any, body: Any, err: Any) -> str:
    """Why a Batch API output line has no answer, in the server's words: the status and
    ``error.message`` of the answer body (a request the model server refused), else the
    line's ``error`` code and message (a request never run: expired, cancelled)."""
    inner = body.get("error") if isinstance(body, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return f"HTTP {status}: {inner['message']}"
    if isinstance(err, dict):
        code, msg = err.get("code"), err.get("message")
        words = ": ".join(str(x) for x in (code, msg) if x)
        if words:
            return words if status is None else f"HTTP {status}: {words}"
    if status is None:
        return "no response" + (f": {err}" if err else "")
    return f"HTTP {status}" + (f": {err}" if err else "")


def _custom_ids(plans: Sequence[Planned], fmt: int) -> list[list[str]]:
    """The ``custom_id`` of every call, unit by unit, as ``write_batch_file`` wrote them."""
    return [
        [custom_id(ui, ci, c.path, c.body, fmt) for ci, c in enumerate(p.unit.calls)]
        for ui, p in enumerate(plans)
    ]


def batch_run_file(
    batch_output: str | Path, batch_input: str | Path, dataset: Dataset, run_file: str | Path
) -> None:
    """Write the answers of a Batch API output as the run file ``run_file``."""
    from toxeval.llm.detectors import parse_detector
    from toxeval.llm.plan import dataset_keys
    from toxeval.llm.request_spec import build_request_spec

    side = read_sidecar(batch_input)
    if side["dataset"]["sha256"] != dataset.sha256:
        raise RunFileError(
            f"{batch_input}: the batch was written for dataset {side['dataset']['name']!r} "
            f"(sha256 {side['dataset']['sha256'][:12]}...), not {dataset.name!r}"
        )
    det = parse_detector(side["detector"])
    options = dict(side["options"])
    template = options.get("template")
    if isinstance(template, str) and not Path(template).is_absolute():
        beside = Path(batch_input).parent / template  # a relative path, as written
        if not Path(template).is_file() and beside.is_file():
            options["template"] = str(beside)
    spec = build_request_spec(
        det,
        dataset.taxonomy,
        "response" if dataset.level == "response" else "prompt",
        **options,
    )
    if canonical_json(spec.fingerprint()) != canonical_json(side["fingerprint"]):
        raise RunFileError(
            f"{batch_input}: the request spec rebuilt from the sidecar has another "
            "fingerprint than the batch (a template file changed?); score with the files "
            "the batch was written with"
        )
    by_id = {k[0]: k for k in dataset_keys(dataset)}
    unknown = [i for i in side["ids"] if not isinstance(i, str) or i not in by_id]
    if unknown:
        raise RunFileError(
            f"{sidecar_path(batch_input)}: {len(unknown)} of its ids are not ids of "
            f"{dataset.name!r} (first: {unknown[0]!r})"
        )
    keys = [by_id[i] for i in side["ids"]]
    outputs = _outputs(Path(batch_output), batch_input)
    plans = list(plan_remote(spec, keys, side["base_url"]))  # once, for the ids and the rows
    ids = _custom_ids(plans, side["toxeval_batch"])
    expected = {cid for unit_ids in ids for cid in unit_ids}
    for cid, (n, _, _) in outputs.items():
        if cid not in expected:
            raise RunFileError(
                f"{batch_output}: line {n}: custom_id {cid!r} is not a request of "
                f"{batch_input}: the output is of another batch, or {batch_input} was "
                "written again since it was sent"
            )
    header = header_line(side["base_url"], side["fingerprint"], det.text)
    with RunWriter(run_file, header, last_header=None) as writer:
        for unit_ids, p in zip(ids, plans, strict=True):
            unit = p.unit
            missing = (0, None, "no answer in the batch output")
            got = [outputs.get(cid, missing)[1:] for cid in unit_ids]
            errors = [e for _, e in got if e is not None]
            if errors:
                for item_id in unit.item_ids:
                    writer.write(
                        {"id": item_id, "request_hash": p.hashes[item_id]}
                        | failed_row(errors[0], None, 1)
                    )
                continue
            bodies = [b for b, _ in got if b is not None]
            try:
                answers = read_answers(spec, unit, bodies)
            except ValueError as e:
                for item_id in unit.item_ids:
                    writer.write(
                        {"id": item_id, "request_hash": p.hashes[item_id]}
                        | failed_row(str(e), 200, 1)
                    )
                continue
            write_answers(writer, spec, p, UnitReplies(bodies, 200, 1, None), answers)
