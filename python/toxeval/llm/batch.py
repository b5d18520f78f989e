"""OpenAI Batch API files, and ``--dry-run``.

``write_batch_file`` writes one line per request in the Batch API input format
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``) instead of
sending it, and beside it a sidecar ``FILE.toxeval.json`` that records how the requests
were made: detector, base URL, fingerprint, the options that built the request spec,
the dataset's sha256 and the ids sent. ``custom_id`` is ``"<unit>.<call>"``, the position
of the request in that plan.

``batch_run_file`` reads the Batch API output (``{"custom_id", "response": {"status_code",
"body"}, "error"}``) with the sidecar of the input file, rebuilds the same plan, reads the
answers with :func:`toxeval.llm.requests.read` and writes them as a run file, so that the
report is the one a live run gives (the request hashes are the live run's too). A request
without a 200 answer in the output makes its items failed rows (unscored).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toxeval.llm.progress import RunSummary
from toxeval.llm.rows import (
    Key,
    failed_row,
    header_line,
    plan_remote,
    read_answers,
    write_answers,
)
from toxeval.llm.runfile import RunFileError, RunWriter, canonical_json

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.detectors import DetectorSpec
    from toxeval.llm.requests import RequestSpec

__all__ = ["batch_run_file", "dry_run_summary", "sidecar_path", "write_batch_file"]

BATCH_FORMAT = 1


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
    """Write the Batch API input file and its sidecar (replacing both)."""
    out = Path(batch_file)
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for ui, p in enumerate(plan_remote(spec, keys, base_url)):
            for ci, call in enumerate(p.unit.calls):
                line = {
                    "custom_id": f"{ui}.{ci}",
                    "method": "POST",
                    "url": _url_path(base_url, call.path),
                    "body": call.body,
                }
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
                n += 1
    sidecar = {
        "toxeval_batch": BATCH_FORMAT,
        "detector": detector.text,
        "base_url": base_url,
        "fingerprint": spec.fingerprint(),
        "options": options,
        "dataset": {"name": dataset.name, "sha256": dataset.sha256},
        "ids": [k[0] for k in keys],
    }
    sidecar_path(out).write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")
    return RunSummary(path=str(out), items=len(keys), requests=n)


def read_sidecar(batch_input: str | Path) -> dict[str, Any]:
    side = sidecar_path(batch_input)
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFileError(
            f"{side}: not found; it is written by 'toxeval predict --batch-file "
            f"{batch_input}' beside the batch input file"
        ) from None
    except (OSError, ValueError) as e:
        raise RunFileError(f"{side}: cannot read it: {e}") from None
    if not isinstance(data, dict) or data.get("toxeval_batch") != BATCH_FORMAT:
        raise RunFileError(f"{side}: not a toxeval batch sidecar")
    return data


def _outputs(path: Path) -> dict[str, tuple[dict[str, Any] | None, str | None]]:
    """custom_id -> (200 body or None, error message or None)."""
    out: dict[str, tuple[dict[str, Any] | None, str | None]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RunFileError(f"{path}: cannot read the batch output: {e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise RunFileError(f"{path}: line {n} is not JSON") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
            raise RunFileError(f"{path}: line {n} has no custom_id (not a Batch API output)")
        resp = obj.get("response")
        err = obj.get("error")
        body = resp.get("body") if isinstance(resp, dict) else None
        status = resp.get("status_code") if isinstance(resp, dict) else None
        if status == 200 and isinstance(body, dict):
            out[obj["custom_id"]] = (body, None)
        else:
            msg = err.get("message") if isinstance(err, dict) else None
            out[obj["custom_id"]] = (None, f"batch request failed: HTTP {status}: {msg or err}")
    return out


def batch_run_file(
    batch_output: str | Path, batch_input: str | Path, dataset: Dataset, run_file: str | Path
) -> None:
    """Write the answers of a Batch API output as the run file ``run_file``."""
    from toxeval.llm import build_request_spec
    from toxeval.llm.detectors import parse_detector
    from toxeval.llm.rows import dataset_keys

    side = read_sidecar(batch_input)
    if side["dataset"]["sha256"] != dataset.sha256:
        raise RunFileError(
            f"{batch_input}: the batch was written for dataset {side['dataset']['name']!r} "
            f"(sha256 {side['dataset']['sha256'][:12]}...), not {dataset.name!r}"
        )
    det = parse_detector(side["detector"])
    spec = build_request_spec(
        det,
        dataset.taxonomy,
        "response" if dataset.level == "response" else "prompt",
        **side["options"],
    )
    if canonical_json(spec.fingerprint()) != canonical_json(side["fingerprint"]):
        raise RunFileError(
            f"{batch_input}: the request spec rebuilt from the sidecar has another "
            "fingerprint than the batch (a template file changed?); score with the files "
            "the batch was written with"
        )
    by_id = {k[0]: k for k in dataset_keys(dataset)}
    keys = [by_id[i] for i in side["ids"]]
    outputs = _outputs(Path(batch_output))
    header = header_line(side["base_url"], side["fingerprint"], det.text)
    with RunWriter(run_file, header, last_header=None) as writer:
        for ui, p in enumerate(plan_remote(spec, keys, side["base_url"])):
            unit = p.unit
            missing = (None, "no answer in the batch output")
            got = [outputs.get(f"{ui}.{ci}", missing) for ci in range(len(unit.calls))]
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
            write_answers(writer, spec, p, bodies, 200, 1, None, answers)
