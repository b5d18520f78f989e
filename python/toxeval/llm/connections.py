"""The connections under the LLM runner's client: one kept-alive HTTP/1.1 connection per
concurrent request, each request taking an idle one (the most recently used first, so
connections stay warm).

Two ways to send, chosen once per client:

- **direct** (the default): each slot is one connection on the native asyncio backend
  of :mod:`toxeval.llm.network`, and each request one exchange of
  :mod:`toxeval.llm.http11` (the request head built once per path, the response read by
  toxeval's own HTTP/1.1 reader). No connection pool (a slot is one connection,
  replaced when the server closed it, the exchange failed or it sat idle past
  ``KEEPALIVE_S``), no httpx client layer (auth flows, redirects, cookies, event hooks:
  the runner uses none of them), no AnyIO cancel scope around each socket read.
  ``Content-Encoding`` gzip and deflate are decoded here, capped as below.
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

from toxeval.llm.http11 import exchange, request_head
from toxeval.llm.network import NativeBackend, NativeStream
from toxeval.llm.requests import endpoint, public_url

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
    """Slots of one kept-alive connection each on the native backend, spoken to by
    :func:`toxeval.llm.http11.exchange` (see the module)."""

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
        n = max(1, slots)
        self._base = base_url
        self._tls = tls
        tls.set_alpn_protocols(["http/1.1"])
        self._backend = NativeBackend()
        self._streams: list[httpcore.AsyncNetworkStream | None] = [None] * n
        self._idle_since = [0.0] * n  # loop time the slot's connection was last used
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._deadline = deadline
        self._targets: dict[str, tuple[str, int, bool, bytes]] = {}
        self._headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    def _target(self, path: str) -> tuple[str, int, bool, bytes]:
        """(host, port, TLS?, request head without Content-Length) of ``path``."""
        found = self._targets.get(path)
        if found is None:
            url = httpx.URL(endpoint(self._base, path))  # httpx's parsing and validation
            fixed = [
                (b"Host", url.netloc),  # "[::1]:8000" for an IPv6 address, as httpx sends
                (b"Accept", b"*/*"),
                (b"Accept-Encoding", b"gzip, deflate"),
                (b"Connection", b"keep-alive"),
            ]
            head = request_head(url.raw_path, fixed + self._headers)
            port = url.port or (443 if url.scheme == "https" else 80)
            found = (url.raw_host.decode("ascii"), port, url.scheme == "https", head)
            self._targets[path] = found
        return found

    async def _connection(
        self, slot: int, host: str, port: int, tls: bool, now: float
    ) -> httpcore.AsyncNetworkStream:
        """The slot's connection, a new one when it has none the server still keeps
        (it closed it, sent something unasked, or it sat idle over ``KEEPALIVE_S``).
        Connecting and the TLS handshake each wait at most the connect timeout and
        together no longer than the attempt's deadline (``now`` + deadline)."""
        stream = self._streams[slot]
        if stream is not None:
            if now - self._idle_since[slot] < KEEPALIVE_S and not stream.get_extra_info(
                "is_readable"
            ):
                return stream
            self._streams[slot] = None
            await stream.aclose()
        loop = asyncio.get_running_loop()
        end = now + self._deadline
        timeout = min(self._connect_timeout, self._deadline)
        stream = await self._backend.connect_tcp(host, port, timeout=timeout)
        if tls:
            timeout = min(self._connect_timeout, max(0.0, end - loop.time()))
            stream = await stream.start_tls(self._tls, server_hostname=host, timeout=timeout)
        self._streams[slot] = stream
        return stream

    async def send(self, path: str, payload: bytes) -> Answer:
        host, port, tls, head = self._target(path)
        request = b"%sContent-Length: %d\r\n\r\n%s" % (head, len(payload), payload)
        slot = await self._idle.get()
        loop = asyncio.get_running_loop()
        now = loop.time()
        timer: asyncio.TimerHandle | None = None
        reusable = False
        try:
            stream = await self._connection(slot, host, port, tls, now)
            if isinstance(stream, NativeStream):
                timer = loop.call_at(now + self._deadline, self._expire, stream)
            response = await exchange(
                stream, request, self._read_timeout, MAX_BODY_BYTES, BodyTooLarge
            )
            reusable = response.keep_alive
            if _log.isEnabledFor(logging.INFO):
                _log.info(
                    'HTTP Request: POST %s "HTTP/1.1 %d %s"',
                    public_url(endpoint(self._base, path)),  # a query key is not logged
                    response.status,
                    response.reason.decode("ascii", "replace"),
                )
            body = response.body
            encoding = response.headers.get("content-encoding")
            if encoding:
                try:
                    body = decode_body(body, encoding)
                except BadEncoding as e:
                    if response.status == 200:
                        raise BadEncoding(str(e), response.status) from None
                    # an error answer's body is only its detail: its status and
                    # headers (a 401 stops the run, Retry-After) still count
                    body = b""
            return Answer(response.status, response.headers, body)
        finally:
            if timer is not None:
                timer.cancel()
            if reusable:
                self._idle_since[slot] = loop.time()
            else:
                await self._drop(slot)
            self._idle.put_nowait(slot)

    def _expire(self, stream: NativeStream) -> None:
        """The attempt on ``stream`` passed its deadline: abort the connection."""
        stream.expire(DeadlineExceeded(self._deadline))

    async def _drop(self, slot: int) -> None:
        """Close the slot's connection (the exchange on it failed or the server ends it)."""
        stream, self._streams[slot] = self._streams[slot], None
        if stream is not None:
            await stream.aclose()

    async def aclose(self) -> None:
        for slot in range(len(self._streams)):
            await self._drop(slot)


def decode_body(body: bytes, encoding: str) -> bytes:
    """``body`` decoded as its ``Content-Encoding`` says (gzip, deflate, identity;
    several are undone last first; an unknown one is left as is, as httpx does), at most
    ``MAX_BODY_BYTES``. An empty body stays empty: an error answer without a body but
    with the header (some proxies send these) is still that error."""
    if not body:
        return body
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
        request = client.build_request("POST", endpoint(self._base, path), content=payload)
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
            if response.status_code == 200:
                raise BadEncoding(str(e), response.status_code) from None
            chunks = []  # an error answer: its status and headers still count
        finally:
            await response.aclose()
        return Answer(response.status_code, response.headers, b"".join(chunks))

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
