"""One HTTP/1.1 exchange on a kept-alive connection: the request written as one buffer,
the response read by a small reader of toxeval's own, for the runner's direct path
(:mod:`toxeval.llm.connections`).

httpcore's HTTP/1.1 connection and h11's state machine validate every header with
regular expressions, build an event object per step and trace each phase; at the
runner's rates that was most of the client's CPU (docs/llm.md, "The network backend").
This reader covers what an OpenAI-compatible answer to a POST needs (RFC 9112):

- a status line ``HTTP/1.x NNN reason`` (the reason may be missing); interim ``1xx``
  answers are skipped, at most ``MAX_INTERIM`` of them (``101``, an upgrade the runner
  never asks for, is a protocol error);
- header fields ``name: value`` (names lower-cased, a repeated field joined with
  ``", "``; lines end in CRLF or a lone LF, as RFC 9112 section 2.2 allows and h11
  reads them; obsolete line folding, a field without a colon, or a head over
  ``MAX_HEAD_BYTES`` are protocol errors);
- the body framed as RFC 9112 section 6.3 says: no body for 204 and 304; chunked when
  ``Transfer-Encoding`` is ``chunked`` (chunk extensions ignored, trailers read and
  dropped up to ``MAX_HEAD_BYTES``, a bad chunk size an error); any other transfer
  coding (``gzip, chunked``, ``chunked, chunked``) is a protocol error, as in h11, since
  its body would be handed on still coded; else ``Content-Length`` (equal repeated
  values allowed, anything else an error); else everything until the server closes;
- the connection is kept for the next request only when the response says HTTP/1.1,
  no ``Connection: close``, was framed by length or chunks, and nothing followed it
  (requests are never pipelined, so extra bytes mean a confused server).

A response cut short (the server closed before its head or body was complete) is
``httpcore.RemoteProtocolError``, as httpcore raises it; timeouts, resets and the
request deadline are raised by the stream (:mod:`toxeval.llm.network`). So the client's
retries (:mod:`toxeval.llm.client`) see exactly the exceptions they saw before.
"""

from __future__ import annotations

import re

import httpcore

__all__ = ["MAX_HEAD_BYTES", "MAX_INTERIM", "Response", "exchange", "request_head"]

MAX_HEAD_BYTES = 64 * 1024  # status line and headers; h11's limit is 16 KiB per event
MAX_INTERIM = 64  # interim 1xx answers before the final one: more is a runaway server
_HEAD_END = re.compile(rb"\n\r?\n")  # the blank line that ends a head (CRLF or LF)
_READ = 64 * 1024  # bytes asked of the stream per read


class Response:
    """A response as read: status, reason, headers (lower-case names), the raw body
    (not yet ``Content-Encoding`` decoded) and whether the connection can be reused."""

    __slots__ = ("body", "headers", "keep_alive", "reason", "status")

    def __init__(
        self, status: int, reason: bytes, headers: dict[str, str], body: bytes, keep_alive: bool
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


def request_head(target: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    """``POST target HTTP/1.1`` and ``headers``, without the ``Content-Length`` line and
    the blank line that end it; a name or value that could split the head (CR, LF, NUL,
    or a name with a colon or space) is ``httpcore.LocalProtocolError``, as h11 refuses
    it."""
    lines = [b"POST " + target + b" HTTP/1.1\r\n"]
    for name, value in headers:
        bad = any(c in value for c in (b"\r", b"\n", b"\0"))
        if bad or not name or any(c in name for c in (b"\r", b"\n", b"\0", b":", b" ")):
            raise httpcore.LocalProtocolError(f"illegal header {name.decode('latin-1')!r}")
        lines.append(name + b": " + value + b"\r\n")
    return b"".join(lines)


class _Reader:
    """The bytes of one response: ``buf`` holds what arrived and is not yet used."""

    __slots__ = ("buf", "eof", "stream", "timeout")

    def __init__(self, stream: httpcore.AsyncNetworkStream, timeout: float) -> None:
        self.stream = stream
        self.timeout = timeout
        self.buf = bytearray()
        self.eof = False

    async def more(self, what: str) -> None:
        """Read what arrives next onto ``buf``; the server closing first is an error
        that names ``what`` was being read."""
        data = await self.stream.read(_READ, timeout=self.timeout)
        if not data:
            self.eof = True
            raise httpcore.RemoteProtocolError(f"the server closed the connection during {what}")
        self.buf += data

    async def line(self, what: str, limit: int) -> bytes:
        """The next CRLF-ended line (without the CRLF)."""
        seen = 0  # searched already (a line trickled byte by byte is not rescanned)
        while True:
            end = self.buf.find(b"\r\n", seen)
            if end >= 0:
                line = bytes(self.buf[:end])
                del self.buf[: end + 2]
                return line
            if len(self.buf) > limit:
                raise httpcore.RemoteProtocolError(f"{what} is longer than {limit} bytes")
            seen = max(0, len(self.buf) - 1)
            await self.more(what)

    async def exactly(self, n: int, what: str) -> bytes:
        while len(self.buf) < n:
            await self.more(what)
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data


async def exchange(
    stream: httpcore.AsyncNetworkStream,
    request: bytes,
    timeout: float,
    max_body: int,
    too_large: type[Exception],
) -> Response:
    """Send ``request`` (head and body) and read the response; each read waits at most
    ``timeout`` seconds. A body over ``max_body`` bytes (declared or received) raises
    ``too_large`` before more is read."""
    try:
        await stream.write(request, timeout=timeout)
    except httpcore.WriteError:
        pass  # as httpcore: a server may answer (an error) before it read the request
    r = _Reader(stream, timeout)
    for _ in range(MAX_INTERIM + 1):
        status, reason, version, headers = await _head(r)
        if status >= 200:
            break
        if status == 101:
            raise httpcore.RemoteProtocolError("the server switched protocols (101)")
    else:
        raise httpcore.RemoteProtocolError(f"more than {MAX_INTERIM} interim 1xx answers")
    keep = version == b"HTTP/1.1" and "close" not in _tokens(headers.get("connection", ""))
    coding = headers.get("transfer-encoding")
    if status in (204, 304):
        body = b""
    elif coding is not None:
        if _tokens(coding) != ["chunked"]:
            raise httpcore.RemoteProtocolError(f"an unsupported Transfer-Encoding {coding!r}")
        body = await _chunked(r, max_body, too_large)
        keep = keep and "content-length" not in headers  # both framings: a confused server
    elif "content-length" in headers:
        n = _content_length(headers["content-length"])
        if n > max_body:
            raise too_large(f"Content-Length {n}")
        body = await r.exactly(n, "the response body")
    else:
        body, keep = await _until_close(r, max_body, too_large), False
    if r.buf:  # bytes after the response: never pipelined, so the server is confused
        keep = False
    return Response(status, reason, headers, body, keep)


async def _head(r: _Reader) -> tuple[int, bytes, bytes, dict[str, str]]:
    """(status, reason, version, headers) of the next response head."""
    seen = 0  # bytes already searched, less the 2 a blank line could start in
    while True:
        found = _HEAD_END.search(r.buf, seen)
        if found is not None:
            break
        seen = max(0, len(r.buf) - 2)  # a head trickled byte by byte is not rescanned
        if len(r.buf) > MAX_HEAD_BYTES:
            raise httpcore.RemoteProtocolError(f"a response head over {MAX_HEAD_BYTES} bytes")
        try:
            await r.more("the response head")
        except httpcore.RemoteProtocolError:
            if not r.buf:
                raise httpcore.RemoteProtocolError(
                    "Server disconnected without sending a response."
                ) from None
            raise
    head = bytes(r.buf[: found.start()])
    del r.buf[: found.end()]
    first, *lines = [line.removesuffix(b"\r") for line in head.split(b"\n")]
    version, _, tail = first.partition(b" ")
    code, _, reason = tail.partition(b" ")
    if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
        raise httpcore.RemoteProtocolError(f"not an HTTP/1.1 status line: {first[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise httpcore.RemoteProtocolError(f"a malformed header line: {line[:80]!r}")
        key = name.decode("latin-1").lower()
        text = value.strip(b" \t").decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return int(code), reason, version, headers


def _tokens(value: str) -> list[str]:
    return [t.strip().lower() for t in value.split(",") if t.strip()]


def _content_length(value: str) -> int:
    """A Content-Length: digits, or the same digits repeated (``"12, 12"``)."""
    values = {v.strip() for v in value.split(",")}
    if len(values) != 1:
        raise httpcore.RemoteProtocolError(f"conflicting Content-Length {value!r}")
    (n,) = values
    if not n.isdigit() or not n.isascii():
        raise httpcore.RemoteProtocolError(f"a malformed Content-Length {value!r}")
    return int(n)


async def _chunked(r: _Reader, max_body: int, too_large: type[Exception]) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        line = await r.line("a chunk size", 1024)
        text = line.split(b";", 1)[0].strip(b" \t")
        if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
            raise httpcore.RemoteProtocolError(f"a bad chunk size {line[:40]!r}")
        n = int(text, 16)
        if n == 0:
            trailers = 0  # trailer fields are not used, but bounded as a head is
            while trailer := await r.line("the trailers", MAX_HEAD_BYTES):
                trailers += len(trailer) + 2
                if trailers > MAX_HEAD_BYTES:
                    raise httpcore.RemoteProtocolError(f"trailers over {MAX_HEAD_BYTES} bytes")
            return b"".join(parts)
        size += n
        if size > max_body:
            raise too_large(f"more than {max_body} bytes received")
        parts.append(await r.exactly(n, "a chunk"))
        if await r.exactly(2, "a chunk") != b"\r\n":
            raise httpcore.RemoteProtocolError("a chunk longer than its size")


async def _until_close(r: _Reader, max_body: int, too_large: type[Exception]) -> bytes:
    while True:
        if len(r.buf) > max_body:
            raise too_large(f"more than {max_body} bytes received")
        data = await r.stream.read(_READ, timeout=r.timeout)
        if not data:
            body = bytes(r.buf)
            r.buf.clear()
            return body
        r.buf += data
