"""The connections under the LLM runner's client: one kept-alive HTTP/1.1 connection per
concurrent request, each request taking an idle one (the most recently used first, so
connections stay warm).

Two ways to send, chosen once per client:

- **direct** (the default): each slot is an ``httpcore.AsyncHTTPConnection`` on the
  native asyncio backend of :mod:`toxeval.llm.network`, and a request is a prebuilt
  ``httpcore.Request``. No connection pool (a slot is one connection, replaced when the
  server closed it, it failed or it sat idle past ``KEEPALIVE_S``), no httpx client
  layer (auth flows, redirects, cookies, event hooks: the runner uses none of them), no
  AnyIO cancel scope around each socket read. ``Content-Encoding`` gzip and deflate are
  decoded here, capped as below.
- **httpx**: when ``HTTP_PROXY``, ``HTTPS_PROXY`` or ``ALL_PROXY`` (any case) is set,
  or the base URL carries ``user:password@``, each slot is an ``httpx.AsyncClient`` of
  one connection, so the proxy variables, ``NO_PROXY`` and URL credentials are honoured
  exactly as httpx honours them.

Both honour ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (httpx's ``create_ssl_context``), split
connect/read timeouts (a write and the wait for a connection use the read timeout), and
read at most ``MAX_BODY_BYTES`` of decoded body. Neither follows redirects nor keeps
cookies.

The read timeout bounds the wait for each piece of an answer, so a server that sends a
byte now and then would never time out; a **deadline** bounds one whole attempt
(connecting, sending, and reading the whole answer): past it the attempt fails with
:class:`DeadlineExceeded`, a timeout like the others. On the direct path it is one
``loop.call_at`` timer per attempt that aborts the connection (connecting is bounded by
the smaller of the connect timeout and what is left of the deadline); on the httpx path
an AnyIO ``fail_after`` around the attempt. The deadline starts once the request has a
connection slot: waiting for a free one is not part of the attempt.

A failure is one of :data:`TIMEOUTS` (httpcore's or httpx's timeout exceptions and
:class:`DeadlineExceeded`), :data:`TRANSPORT_ERRORS` (refused, reset, closed, protocol
errors), :class:`BodyTooLarge` or :class:`BadEncoding`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import zlib
from collections.abc import Mapping

import anyio
import httpcore
import httpx

from toxeval.llm.network import NativeBackend, NativeStream

__all__ = [
    "MAX_BODY_BYTES",
    "TIMEOUTS",
    "TRANSPORT_ERRORS",
    "Answer",
    "BadEncoding",
    "BodyTooLarge",
    "DeadlineExceeded",
    "open_connections",
    "proxy_configured",
]

# The largest answer body read (after gzip/deflate decoding): a bigger one is a failure of
# that request, so a hostile or broken server cannot exhaust memory (a gzip bomb).
MAX_BODY_BYTES = 32 * 1024 * 1024
KEEPALIVE_S = 5.0  # an idle connection older than this is replaced (httpx's default)


class DeadlineExceeded(httpcore.TimeoutException):
    """An attempt (connect, send, the whole answer) that passed its deadline."""

    def __init__(self, deadline: float) -> None:
        super().__init__(f"no complete answer within the request deadline of {deadline:g} s")


TIMEOUTS = (httpcore.TimeoutException, httpx.TimeoutException)  # DeadlineExceeded too
TRANSPORT_ERRORS = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
    httpcore.ConnectionNotAvailable,
    httpx.TransportError,
)
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
# the line httpx logs for each request, on httpx's logger, so that logging set up for
# httpx sees every request whichever way it was sent
_log = logging.getLogger("httpx")


class BodyTooLarge(Exception):
    """An answer body larger than ``MAX_BODY_BYTES`` once decoded."""


class BadEncoding(Exception):
    """An answer body its ``Content-Encoding`` does not decode (a corrupt gzip stream);
    ``status_code`` is the answer's status."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class Answer:
    """An HTTP answer: status, headers (lower-case names, repeated ones joined by ", ")
    and the decoded body."""

    __slots__ = ("body", "headers", "status_code")

    def __init__(self, status_code: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.body = body


def proxy_configured() -> bool:
    """Whether a proxy variable httpx reads is set (then requests go through httpx)."""
    return any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARIABLES)


def open_connections(
    base_url: str,
    headers: dict[str, str],
    *,
    slots: int,
    connect_timeout: float,
    read_timeout: float,
    deadline: float,
) -> DirectConnections | HttpxConnections:
    """The connections for ``base_url``: httpx's when a proxy is configured or the URL
    carries credentials (httpx sends them as Basic auth), else direct. ``deadline``:
    seconds one attempt may take in all (see the module)."""
    tls = httpx.create_ssl_context()  # one CA bundle load for every connection (~0.1 s)
    direct = not proxy_configured() and not httpx.URL(base_url).userinfo
    cls = DirectConnections if direct else HttpxConnections
    return cls(base_url, headers, tls, slots, connect_timeout, read_timeout, deadline)


class _Slots:
    """``slots`` connections handed out most recently used first."""

    def __init__(self, slots: int) -> None:
        self._idle: asyncio.LifoQueue[int] = asyncio.LifoQueue()
        for i in reversed(range(max(1, slots))):
            self._idle.put_nowait(i)


class DirectConnections(_Slots):
    """Slots of ``httpcore.AsyncHTTPConnection`` on the native backend (see the module)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        tls: ssl.SSLContext,
        slots: int,
        connect_timeout: float,
        read_timeout: float,
        deadline: float,
    ) -> None:
        super().__init__(slots)
        self._base = base_url
        self._tls = tls
        tls.set_alpn_protocols(["http/1.1"])
        self._backend = NativeBackend()
        self._conns: list[httpcore.AsyncHTTP11Connection | None] = [None] * max(1, slots)
        # each slot's connection, for the deadline timer to abort
        self._streams: list[NativeStream | None] = [None] * max(1, slots)
        self._deadline = deadline
        self._timeouts = {
            "connect": connect_timeout,
            "read": read_timeout,
            "write": read_timeout,
            "pool": read_timeout,
        }
        self._urls: dict[str, tuple[httpcore.URL, list[tuple[bytes, bytes]]]] = {}
        self._headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    def _target(self, path: str) -> tuple[httpcore.URL, list[tuple[bytes, bytes]]]:
        """The URL of ``path`` and the headers every request to it carries."""
        found = self._urls.get(path)
        if found is None:
            url = httpx.URL(self._base + path)  # httpx's parsing and validation
            target = httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            )
            fixed = [
                (b"Host", url.netloc),  # "[::1]:8000" for an IPv6 address, as httpx sends
                (b"Accept", b"*/*"),
                (b"Accept-Encoding", b"gzip, deflate"),
                (b"Connection", b"keep-alive"),
            ]
            found = self._urls[path] = (target, fixed + self._headers)
        return found

    async def _connection(
        self, slot: int, url: httpcore.URL, left: float
    ) -> httpcore.AsyncHTTP11Connection:
        """The slot's connection, a new one when it has none the server still keeps
        (connecting for at most the connect timeout, and ``left`` seconds)."""
        conn = self._conns[slot]
        if conn is not None and not (conn.is_closed() or conn.has_expired()):
            return conn
        self._conns[slot] = None
        self._streams[slot] = None
        if conn is not None:
            await conn.aclose()
        origin = url.origin
        host = origin.host.decode("ascii")
        timeout = min(self._timeouts["connect"], left)
        stream = await self._backend.connect_tcp(host, origin.port, timeout=timeout)
        if origin.scheme == b"https":
            stream = await stream.start_tls(self._tls, server_hostname=host, timeout=timeout)
        if isinstance(stream, NativeStream):
            self._streams[slot] = stream
        conn = httpcore.AsyncHTTP11Connection(origin, stream, keepalive_expiry=KEEPALIVE_S)
        # A slot's connection serves one request at a time, so httpcore's lock around its
        # state is never contended; an AnyIO lock yields to the event loop on each
        # acquire (twice per request), this one does not.
        conn._state_lock = _Uncontended()  # type: ignore[assignment]
        self._conns[slot] = conn
        return conn

    async def send(self, path: str, payload: bytes) -> Answer:
        url, headers = self._target(path)
        request = httpcore.Request(
            b"POST",
            url,
            headers=[*headers, (b"Content-Length", b"%d" % len(payload))],
            content=payload,
            extensions={"timeout": self._timeouts},
        )
        slot = await self._idle.get()
        loop = asyncio.get_running_loop()
        deadline_at = loop.time() + self._deadline
        timer: asyncio.TimerHandle | None = None
        try:
            conn = await self._connection(slot, url, self._deadline)
            timer = loop.call_at(deadline_at, self._expire, slot)
            response = await conn.handle_async_request(request)
            if _log.isEnabledFor(logging.INFO):
                _log.info(
                    'HTTP Request: POST %s "%s %d %s"',
                    self._base + path,
                    response.extensions.get("http_version", b"HTTP/1.1").decode("ascii"),
                    response.status,
                    response.extensions.get("reason_phrase", b"").decode("ascii", "replace"),
                )
            try:
                answer: dict[str, str] = {}
                for k, v in response.headers:
                    name = k.decode("latin-1").lower()
                    value = v.decode("latin-1")
                    answer[name] = f"{answer[name]}, {value}" if name in answer else value
                declared = answer.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                    raise BodyTooLarge(f"Content-Length {declared}")
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_stream():
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        raise BodyTooLarge(f"more than {MAX_BODY_BYTES} bytes received")
                    chunks.append(chunk)
            finally:
                await response.aclose()
            body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            encoding = answer.get("content-encoding")
            if encoding:
                try:
                    body = decode_body(body, encoding)
                except BadEncoding as e:
                    raise BadEncoding(str(e), response.status) from None
            return Answer(response.status, answer, body)
        finally:
            if timer is not None:
                timer.cancel()
            self._idle.put_nowait(slot)

    def _expire(self, slot: int) -> None:
        """The deadline of the attempt on ``slot`` passed: abort its connection."""
        stream = self._streams[slot]
        if stream is not None:
            stream.expire(DeadlineExceeded(self._deadline))

    async def aclose(self) -> None:
        for conn in self._conns:
            if conn is not None:
                await conn.aclose()


class _Uncontended:
    """An async lock for a connection only one task uses at a time."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


def decode_body(body: bytes, encoding: str) -> bytes:
    """``body`` decoded as its ``Content-Encoding`` says (gzip, deflate, identity;
    several are undone last first; an unknown one is left as is, as httpx does), at most
    ``MAX_BODY_BYTES``."""
    for name in reversed([e.strip().lower() for e in encoding.split(",")]):
        if name in ("gzip", "x-gzip"):
            body = _inflate(body, zlib.MAX_WBITS | 16)
        elif name == "deflate":
            try:
                body = _inflate(body, zlib.MAX_WBITS)  # zlib-wrapped, as the RFC says
            except BadEncoding:
                body = _inflate(body, -zlib.MAX_WBITS)  # raw deflate, as some servers send
    return body


def _inflate(data: bytes, wbits: int) -> bytes:
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, MAX_BODY_BYTES + 1)
    except zlib.error as e:
        raise BadEncoding(str(e)) from None
    if len(out) > MAX_BODY_BYTES:
        raise BodyTooLarge(f"more than {MAX_BODY_BYTES} bytes decoded")
    if not d.eof:
        raise BadEncoding("the compressed body is incomplete")
    return out


class HttpxConnections(_Slots):
    """Slots of ``httpx.AsyncClient`` of one connection each: the proxy variables are
    httpx's to read (see the module)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        tls: ssl.SSLContext,
        slots: int,
        connect_timeout: float,
        read_timeout: float,
        deadline: float,
    ) -> None:
        super().__init__(slots)
        self._base = base_url
        self._deadline = deadline
        self._clients = [
            httpx.AsyncClient(
                verify=tls,
                headers=headers,
                timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
            for _ in range(max(1, slots))
        ]

    async def send(self, path: str, payload: bytes) -> Answer:
        slot = await self._idle.get()
        try:
            with anyio.fail_after(self._deadline):
                return await self._send(self._clients[slot], path, payload)
        except TimeoutError:  # fail_after's own (httpx's timeouts are not TimeoutError)
            raise DeadlineExceeded(self._deadline) from None
        finally:
            self._idle.put_nowait(slot)

    async def _send(self, client: httpx.AsyncClient, path: str, payload: bytes) -> Answer:
        client.cookies.clear()  # never kept: the key authenticates every request
        request = client.build_request("POST", self._base + path, content=payload)
        response = await client.send(request, stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise BodyTooLarge(f"Content-Length {declared}")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise BodyTooLarge(f"more than {MAX_BODY_BYTES} bytes decoded")
                chunks.append(chunk)
        except httpx.DecodingError as e:
            raise BadEncoding(str(e), response.status_code) from None
        finally:
            await response.aclose()
        return Answer(response.status_code, response.headers, b"".join(chunks))

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
