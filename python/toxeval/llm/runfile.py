"""The run file: every answer of a run, appended as it arrives, so nothing is lost.

JSONL. Header lines ``{"toxeval_run": 1, "fingerprint": {...}, "base_url": ..., "detector":
...}`` say what the rows after them were asked with (never an API key, nor a password or
query key of the base URL: see :func:`toxeval.llm.plan.run_url`); each other line is one
finished item::

    {"id", "request_hash", "scores": {category_id: float|null} | null, "output",
     "reasoning", "raw": [response bodies], "parse_status", "parse_reason", "method",
     "status_code", "attempts", "retries", "latency_s", "ttfb_s", "usage",
     "error": null | "message", "unit_items": n (only when n > 1)}

``attempts`` counts the HTTP requests sent for the item's unit, ``retries`` those past
one per call; ``latency_s`` is the unit's time from its first request to its last answer
read (waits and retries included), ``ttfb_s`` the time from sending the answered attempt
of its first call to that answer's head (status line and headers); ``usage`` sums the
bodies' ``usage`` blocks (prompt, completion and total tokens) for a one-item unit. The
reasoning tokens are read from the bodies themselves
(``usage.completion_tokens_details.reasoning_tokens``), not stored twice. Rows written
before ``retries`` and ``ttfb_s`` existed lack them: read as not recorded, never 0. The
rows of a unit of several items (a moderation batch) carry ``"unit_items": n``: the
unit's attempts and retries, repeated on each of its rows, count once in all.

(rows of a local classifier, ``onnx:`` / ``hf:``, also carry ``"truncated": bool``: the
text was cut to the model's token limit.)

``request_hash`` is the sha256 of the canonical JSON of ``[base_url, fingerprint, item
text, item response]``: a changed model, template, taxonomy or decoding parameter gives
another hash, so the row is asked again and never mixed with the new ones.

Which row counts: the **last** header names the current fingerprint and base URL; from
them and the dataset the expected hash of every item is computed again, and for each id
the last row carrying that hash is the item's answer. Rows with another hash are stale
(superseded, counted, never scored). A row with ``"error"`` (the request failed after its
retries) or ``"scores": null`` is unscored, never a negative, and is asked again by the
next run.

Durability: each row is written with one ``write`` of the whole line (no user-space
buffer), and the file is fsynced at least every second and when it is closed. A process
killed in the middle of a write leaves at most a torn last line (no trailing newline):
readers ignore it and the next writer truncates it before appending, so the item is asked
again. A write that fails (a full disk) is undone by truncating back to the last complete
line. A writer holds an exclusive ``flock`` on the file: a second writer is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "RUN_FORMAT",
    "RunFileError",
    "RunRecord",
    "RunState",
    "RunWriter",
    "Usage",
    "is_run_file",
    "read_run",
    "request_hash",
    "request_hasher",
    "row_usage",
]

RUN_FORMAT = 1
FSYNC_EVERY = 1.0  # seconds


class RunFileError(ValueError):
    """A run file that cannot be read or appended to."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(
    base_url: str, fingerprint: Mapping[str, Any], text: str, response: str | None
) -> str:
    """sha256 (hex) of everything that determines one item's answer."""
    key = canonical_json([base_url, dict(fingerprint), text, response])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def request_hasher(
    base_url: str, fingerprint: Mapping[str, Any]
) -> Callable[[str, str | None], str]:
    """``request_hash(base_url, fingerprint, text, response)`` as a function of ``text``
    and ``response``: the canonical JSON of a list is its items' canonical JSON between
    ``[``, ``,`` and ``]``, so the shared start (the fingerprint, the largest part) is
    encoded and hashed once, not once per item."""
    start = hashlib.sha256(
        f"[{canonical_json(base_url)},{canonical_json(dict(fingerprint))},".encode()
    )
    encode = json.JSONEncoder(ensure_ascii=False).encode  # a str or None: no keys to sort

    def hash_item(text: str, response: str | None) -> str:
        h = start.copy()
        h.update(f"{encode(text)},{encode(response)}]".encode())
        return h.hexdigest()

    return hash_item


def is_run_file(path: str | Path) -> bool:
    """True when ``path`` is a regular file whose first line is a run-file header (a
    named pipe is not opened here: that would wait for a writer, or eat its first line)."""
    if not Path(path).is_file():
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
    except OSError:
        return False
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and "toxeval_run" in head


def json_scores(scores: Any, ids: tuple[str, ...]) -> dict[str, float | None] | None:
    """A (K,) score vector as ``{category_id: float}``, NaN (an unmapped, unknown cell)
    as None; None stays None."""
    if scores is None:
        return None
    out: dict[str, float | None] = {}
    for c, v in zip(ids, scores, strict=True):
        f = float(v)
        out[c] = None if math.isnan(f) else f
    return out


def _scan_end(path: Path) -> tuple[int, int]:
    """(size, offset just after the last newline) of ``path``."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        pos = size
        while pos > 0:
            step = min(pos, 1 << 16)
            f.seek(pos - step)
            chunk = f.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                return size, pos - step + nl + 1
            pos -= step
    return size, 0


class RunWriter:
    """Appends rows to a run file (see the module docstring): repairs a torn tail, adds
    ``header`` when it differs from the file's last header, then ``write(row)`` per row.
    Use as a context manager; ``close()`` fsyncs."""

    def __init__(self, path: str | Path, header: dict[str, Any], *, last_header: Any) -> None:
        self.path = Path(path)
        self.repaired_bytes = 0
        if self.path.exists() and not self.path.is_file():
            raise RunFileError(f"{self.path}: exists and is not a file")
        try:
            if not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:  # a read-only file system, a name too long, no such folder...
            raise RunFileError(f"{self.path}: cannot write the run file: {e.strerror}") from None
        try:
            self._lock()
            size, end = _scan_end(self.path)
            if end > 0 and not is_run_file(self.path):
                raise RunFileError(
                    f"{self.path}: exists and is not a toxeval run file (no run header on its "
                    "first line); not appending to it: name another file"
                )
            if end < size:
                os.ftruncate(self._fd, end)
                os.fsync(self._fd)
                self.repaired_bytes = size - end
            self._end = end  # the file ends with a complete line here
            self._synced = time.monotonic()
            if _header_key(last_header) != _header_key(header):
                self._line(header)
                self.sync()
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    def _lock(self) -> None:
        """An exclusive lock on the file for as long as it is open: a second writer
        (another ``toxeval predict`` on the same file) is refused, never interleaved."""
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFileError(
                f"{self.path}: another process is writing to this run file; wait for it "
                "to finish or name another file"
            ) from None

    def _line(self, obj: dict[str, Any]) -> None:
        """Append one whole line. A failed write (a full disk) is undone by truncating
        back to the last complete line, so the file stays readable and resumable."""
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (valid JSON text, e.g. a server's "\ud800") has no
            # UTF-8 form: written as an escape, it reads back as the same string.
            data = (json.dumps(obj, allow_nan=False) + "\n").encode("ascii")
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._end)
            raise self._failed(e) from None
        self._end += len(data)

    def _failed(self, e: OSError) -> RunFileError:
        return RunFileError(
            f"{self.path}: writing the run file failed: {e.strerror or e}; the rows written "
            "before are kept (rerun the same command to resume once this is fixed)"
        )

    def write(self, row: dict[str, Any]) -> None:
        self._line(row)
        if time.monotonic() - self._synced >= FSYNC_EVERY:
            self.sync()

    def sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as e:
            raise self._failed(e) from None
        self._synced = time.monotonic()

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            self.sync()
        finally:
            os.close(self._fd)  # releases the lock
            self._fd = -1

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _header_key(header: Any) -> str | None:
    if not isinstance(header, dict):
        return None
    return canonical_json({k: header.get(k) for k in ("fingerprint", "base_url", "detector")})


@dataclass(frozen=True)
class Usage:
    """The tokens one row's answer took, as the server reported them (None: the server
    did not report that count)."""

    prompt: int | None
    completion: int | None
    reasoning: int | None


# a count beyond what a float holds exactly is no count a server reported: not recorded
# (and a 400-digit integer would overflow the float arithmetic of the cost block)
_MAX_COUNT = 2**53


def _count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return value if ok and 0 <= value <= _MAX_COUNT else None


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def row_usage(obj: Mapping[str, Any]) -> Usage | None:
    """The tokens of a row: from its ``usage`` (a one-item unit's sum over its bodies;
    null for a unit of several items, whose bodies' usage is the whole unit's) and the
    reasoning tokens of its bodies. None when the row has no usage."""
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        return None
    reasoning: int | None = None
    raw = obj.get("raw")
    for body in raw if isinstance(raw, list) else ():
        u = body.get("usage") if isinstance(body, dict) else None
        details = u.get("completion_tokens_details") if isinstance(u, dict) else None
        if isinstance(details, dict):
            reasoning = _add(reasoning, _count(details.get("reasoning_tokens")))
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if prompt is None and completion is None:
        return None
    return Usage(prompt, completion, reasoning)


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            f = float(value)
        except OverflowError:  # an integer too large for a float: not a time recorded
            return None
        return f if math.isfinite(f) and f >= 0 else None
    return None


@dataclass(frozen=True)
class RunRecord:
    """What a reader keeps of one row (not the raw bodies)."""

    request_hash: str
    scores: dict[str, float | None] | None
    output: str | None
    parse_status: str | None
    method: str | None
    error: str | None
    graded: bool | None
    truncated: bool = False  # a local classifier cut the text to its token limit
    # what the answer cost (toxeval.llm.run_costs); None: not recorded in the row
    attempts: int | None = None
    retries: int | None = None
    latency_s: float | None = None
    ttfb_s: float | None = None
    usage: Usage | None = None
    unit_items: int = 1  # the items of the row's unit, which share its attempts and retries

    @property
    def ok(self) -> bool:
        return self.error is None and self.scores is not None


@dataclass
class RunState:
    """A run file as read: its last header and, per id, the rows that matter."""

    path: Path
    header: dict[str, Any] | None
    latest: dict[str, RunRecord] = field(default_factory=dict)  # last row per id
    by_hash: dict[tuple[str, str], RunRecord] = field(default_factory=dict)
    rows: int = 0
    corrupt_lines: int = 0
    torn_tail: bool = False

    def current(self, item_id: str, expected_hash: str) -> RunRecord | None:
        """The last row of ``item_id`` with ``expected_hash`` (None: never answered)."""
        return self.by_hash.get((item_id, expected_hash))


def _lines(path: Path) -> Iterator[tuple[bytes, bool]]:
    """(line without newline, complete?) for every line."""
    with open(path, "rb") as f:
        for raw in f:
            if raw.endswith(b"\n"):
                yield raw[:-1], True
            else:
                yield raw, False


def read_run(path: str | Path, *, light: bool = False) -> RunState:
    """Read a run file (missing: an empty state). Keeps, per (id, hash), the last row;
    ``light`` (for resuming) keeps whether a row has scores, not the scores."""
    p = Path(path)
    state = RunState(path=p, header=None)
    if not p.exists():
        return state
    if not p.is_file():
        raise RunFileError(f"{p}: exists and is not a file")
    try:
        for raw, complete in _lines(p):
            if not complete:
                state.torn_tail = True
                break
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                state.corrupt_lines += 1
                continue
            if not isinstance(obj, dict):
                state.corrupt_lines += 1
                continue
            if "toxeval_run" in obj:
                state.header = obj
                continue
            rec = _record(obj, light)
            if rec is None:
                state.corrupt_lines += 1
                continue
            item_id = str(obj["id"])
            state.rows += 1
            state.latest[item_id] = rec
            state.by_hash[(item_id, rec.request_hash)] = rec
    except OSError as e:
        raise RunFileError(f"{p}: cannot read the run file: {e}") from None
    return state


def _record(obj: dict[str, Any], light: bool) -> RunRecord | None:
    h = obj.get("request_hash")
    if not isinstance(h, str) or "id" not in obj:
        return None
    scores = obj.get("scores")
    if scores is not None and not isinstance(scores, dict):
        return None
    error = None if obj.get("error") is None else str(obj["error"])
    out = obj.get("output")
    graded = obj.get("graded")
    if light:
        return RunRecord(h, None if scores is None else {}, None, None, None, error, None)
    return RunRecord(
        request_hash=h,
        scores=scores,
        output=out if isinstance(out, str) else None,
        parse_status=obj.get("parse_status"),
        method=obj.get("method"),
        error=error,
        graded=graded if isinstance(graded, bool) else None,
        truncated=obj.get("truncated") is True,
        attempts=_count(obj.get("attempts")),
        retries=_count(obj.get("retries")),
        latency_s=_number(obj.get("latency_s")),
        ttfb_s=_number(obj.get("ttfb_s")),
        usage=row_usage(obj),
        unit_items=_count(obj.get("unit_items")) or 1,
    )
