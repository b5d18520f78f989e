"""The connections under the LLM runner's client: aiohttp's client session, held to the
runner's rules.

One ``aiohttp.ClientSession`` per :class:`~toxeval.llm.client.Client`, made in the
running event loop at the first request. ``slots`` requests are in flight at once (a
semaphore taken before each attempt, so that waiting for a free slot is not part of the
attempt); aiohttp's connector keeps the connections alive between requests (HTTP/1.1,
idle ones closed after ``KEEPALIVE_S``) and replaces one the server closed. What aiohttp
owns: the HTTP/1.1 exchange (status line, 1xx, chunked bodies, framing, keep-alive), TLS,
``Content-Encoding`` decoding (gzip, deflate; more when its optional decoders are
installed), its own cap on how much one piece of a compressed body may inflate to. What
is toxeval's here:

- **timeouts**: ``connect_timeout`` bounds connecting and the TLS handshake
  (``sock_connect``), ``read_timeout`` the wait for each piece of the answer
  (``sock_read``), and the **deadline** one whole attempt (``total``: connecting, sending
  and reading the whole answer), so that a server that sends a byte now and then is cut
  off like a silent one. Past it the attempt fails with :class:`DeadlineExceeded`;
- **the body cap**: at most ``MAX_BODY_BYTES`` of decoded body are read
  (:class:`BodyTooLarge`), so a gzip bomb or an endless body cannot exhaust memory;
- **a body that does not decode** is :class:`BadEncoding` for a 200; an error answer's
  body is only its detail, so its status and headers (a 401 stops the run, a 429's
  ``Retry-After``) still count with an empty body;
- **never** a redirect followed, a cookie kept, or ``~/.netrc`` read;
- **TLS** with one context for every connection: ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``
  when set (how a private CA is trusted), else certifi's CA bundle (as httpx, requests and
  openai-python verify);
- **proxies**: :func:`proxy_for` reads the system's proxy settings once per client with
  the standard library (``urllib.request.getproxies``: the ``*_PROXY`` variables, and
  the system settings on Windows and macOS; ``proxy_bypass`` for ``NO_PROXY`` and the
  system's exceptions), the functions aiohttp's ``trust_env`` calls on every request.
  ``trust_env`` itself is off: it also reads ``~/.netrc`` on every request (in a
  thread), whose Basic credentials would replace the API key. Only ``http://`` proxies
  are supported; any other scheme is a clear error, not a silent direct connection.
  The headers go with each request, none as the session's defaults: aiohttp copies
  those onto the ``CONNECT`` it sends a proxy, the key's ``Authorization`` as
  ``Proxy-Authorization``. A base URL with ``user:password@`` sends them as Basic auth.

A failure is one of :data:`TIMEOUTS` (aiohttp's connect and read timeouts,
:class:`DeadlineExceeded`), :data:`TRANSPORT_ERRORS` (aiohttp's client errors: refused,
reset, closed, a cut or malformed answer), :class:`BodyTooLarge` or :class:`BadEncoding`.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
import math
import os
import ssl
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError
from yarl import URL

from toxeval.llm.requests import endpoint, public_url

__all__ = [
    "MAX_BODY_BYTES",
    "TIMEOUTS",
    "TRANSPORT_ERRORS",
    "Answer",
    "BadEncoding",
    "BodyTooLarge",
    "Connections",
    "DeadlineExceeded",
    "basic_auth",
    "proxy_for",
    "tls_context",
]

# The largest answer body read (after gzip/deflate decoding): a bigger one is a failure of
# that request, so a hostile or broken server cannot exhaust memory (a gzip bomb).
MAX_BODY_BYTES = 32 * 1024 * 1024
KEEPALIVE_S = 5.0  # an idle connection older than this is replaced (httpx's default)


class DeadlineExceeded(asyncio.TimeoutError):
    """An attempt (connect, send, the whole answer) that passed its deadline."""

    def __init__(self, deadline: float) -> None:
        super().__init__(f"no complete answer within the request deadline of {deadline:g} s")


# asyncio.TimeoutError is TimeoutError from Python 3.11 on; aiohttp's connect and read
# timeouts (ServerTimeoutError) are both
TIMEOUTS = (asyncio.TimeoutError, TimeoutError)
# a malformed answer is a ClientError once aiohttp has read it, a HttpProcessingError
# when its parser refuses a piece of the body
TRANSPORT_ERRORS = (aiohttp.ClientError, HttpProcessingError)
_log = logging.getLogger("toxeval.llm")  # one INFO line per answer, as httpx logs them


class BodyTooLarge(Exception):
    """An answer body larger than ``MAX_BODY_BYTES`` once decoded."""


class BadEncoding(Exception):
    """An answer body its ``Content-Encoding`` does not decode (a corrupt gzip stream);
    ``status_code`` is the answer's status."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class Answer:
    """An HTTP answer: status, headers (looked up in any case), the decoded body and
    ``ttfb``, the seconds from sending the request to its answer's head (status line and
    headers) arriving (None: not measured)."""

    __slots__ = ("body", "headers", "status_code", "ttfb")

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        body: bytes,
        ttfb: float | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.body = body
        self.ttfb = ttfb


def tls_context() -> ssl.SSLContext:
    """The context that verifies every connection: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR``
    when set (one that cannot be read is a ValueError), else certifi's CA bundle
    (httpx's ``create_ssl_context`` rules); HTTP/1.1 offered by ALPN."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    try:
        if cafile:
            ctx = ssl.create_default_context(cafile=cafile)
        elif capath:
            if not os.path.isdir(capath):
                raise FileNotFoundError("not a directory")
            ctx = ssl.create_default_context(capath=capath)
        else:
            import certifi

            ctx = ssl.create_default_context(cafile=certifi.where())
    except (OSError, ssl.SSLError) as e:  # a variable the user set is never ignored
        name, value = ("SSL_CERT_FILE", cafile) if cafile else ("SSL_CERT_DIR", capath)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        message = f"{name}={value} gives no CA certificates to verify TLS with: {reason}"
        raise ValueError(message) from None
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def basic_auth(user: str, password: str) -> str:
    """The value of a Basic ``Authorization`` header (RFC 7617, UTF-8)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def proxy_for(url: str) -> tuple[URL | None, str | None]:
    """The proxy requests to ``url`` go through, as the system says (see the module):
    ``(proxy URL without credentials, the Proxy-Authorization its credentials make)``,
    or ``(None, None)`` for a direct connection. A proxy whose scheme is not ``http``
    is a ValueError."""
    target = URL(url)
    proxies = getproxies()
    chosen = proxies.get(target.scheme) or proxies.get("all")
    if not chosen or target.host is None or proxy_bypass(target.host):
        return None, None
    proxy = URL(chosen if "://" in chosen else f"http://{chosen}")
    if proxy.scheme != "http":
        shown = public_url(str(proxy))
        raise ValueError(
            f"the proxy {shown} (for {target.scheme}:// URLs) is not supported: toxeval "
            "sends through http:// proxies only (SOCKS and https:// proxies: see "
            "'Proxies' in docs/llm.md)"
        )
    auth = None
    if proxy.user is not None:
        auth = basic_auth(proxy.user, proxy.password or "")
    return proxy.with_user(None), auth


class Connections:
    """``slots`` requests at a time to ``base_url`` through one aiohttp session, each
    attempt bounded by ``deadline`` seconds in all (see the module)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        slots: int,
        connect_timeout: float,
        read_timeout: float,
        deadline: float,
    ) -> None:
        parsed = URL(base_url)
        self._headers = dict(headers)
        self._base = base_url
        if parsed.user is not None or parsed.password is not None:
            # sent as Basic auth, in place of a bearer key (as httpx and curl send them)
            self._headers["Authorization"] = basic_auth(parsed.user or "", parsed.password or "")
            parts = urlsplit(base_url)  # the rest of the URL exactly as given
            self._base = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        self._proxy, proxy_auth = proxy_for(self._base)
        self._proxy_headers = None
        if proxy_auth is not None:  # to the proxy only, never through its tunnel
            if self._base.startswith("https:"):
                self._proxy_headers = {"Proxy-Authorization": proxy_auth}  # on CONNECT
            else:
                self._headers["Proxy-Authorization"] = proxy_auth  # the proxy reads it
        for name, value in self._headers.items():
            if any(c in value for c in "\r\n\0"):  # would split the request's head
                raise ValueError(
                    f"the {name} header cannot be sent: the API key or the credentials it "
                    "carries hold a line break or NUL character"
                )
        self._tls = tls_context()  # one CA bundle load for every connection (~0.1 s)
        self._slots = asyncio.Semaphore(max(1, slots))
        self._timeout = aiohttp.ClientTimeout(  # inf is None, no limit, to aiohttp (whose
            # timers round the time up to an integer: inf was an OverflowError)
            total=_limit(deadline),
            sock_connect=_limit(connect_timeout),
            sock_read=_limit(read_timeout),
        )
        self._deadline = deadline
        self._urls: dict[str, URL] = {}
        self._session: aiohttp.ClientSession | None = None

    def _url(self, path: str) -> URL:
        """The URL of ``path`` under the base URL, parsed once (its query as given)."""
        found = self._urls.get(path)
        if found is None:
            found = self._urls[path] = URL(endpoint(self._base, path), encoded=True)
        return found

    def _open(self) -> aiohttp.ClientSession:
        connector = _Connector(
            limit=0,  # the slots are the limit: a request never waits inside aiohttp
            ssl=self._tls,
            keepalive_timeout=KEEPALIVE_S,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            # no default headers: aiohttp adds a session's defaults to the CONNECT it
            # sends a proxy, and would send the key there as Proxy-Authorization
            timeout=self._timeout,
            cookie_jar=aiohttp.DummyCookieJar(),  # never kept: the key authenticates
        )
        return self._session

    async def send(self, path: str, payload: bytes) -> Answer:
        """POST ``payload`` to ``path``: one attempt, its answer or one of the failures
        the module lists."""
        url = self._url(path)
        async with self._slots:
            session = self._session or self._open()
            sent = time.monotonic()
            try:
                async with session.post(
                    url,
                    data=payload,
                    headers=self._headers,
                    allow_redirects=False,
                    proxy=self._proxy,
                    proxy_headers=self._proxy_headers,
                ) as response:
                    ttfb = time.monotonic() - sent  # aiohttp enters here once the head is read
                    body = await _body(response)
                    if _log.isEnabledFor(logging.INFO):
                        _log.info(
                            'HTTP Request: POST %s "HTTP/%d.%d %d %s"',
                            public_url(str(url)),  # a query key is not logged
                            *(response.version or (1, 1)),
                            response.status,
                            response.reason or "",
                        )
                    return Answer(response.status, response.headers, body, ttfb)
            except aiohttp.ServerTimeoutError:
                raise  # the connect or the read timeout
            except asyncio.TimeoutError:  # the total: this attempt's deadline
                raise DeadlineExceeded(self._deadline) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _limit(seconds: float) -> float | None:
    """A timeout as aiohttp takes it: None (no limit) for an infinite one."""
    return None if math.isinf(seconds) else seconds


class _AnswersOnly(ResponseHandler):
    """aiohttp's protocol for one connection, which also refuses an answer nobody asked
    for: bytes that arrive on a kept-alive connection after its answer was read whole,
    before the next request (a confused server or proxy answering one request twice).
    aiohttp would keep them and hand them to the next request on that connection as its
    answer; here they close the connection, which the pool then replaces."""

    _asked = False  # a request was sent and its final answer is not yet complete
    _final: Any = None  # the body stream of that final answer, once its head came

    def set_response_params(self, **kw: Any) -> None:  # a request is about to be sent
        self._asked, self._final = True, None
        ResponseHandler.set_response_params(self, **kw)

    def feed_data(self, data: Any, size: int = 0) -> None:  # an answer's head was read
        message, payload = data
        if not 100 <= message.code < 200:  # interim 1xx answers come before the final one
            self._final = payload
        ResponseHandler.feed_data(self, data, size)

    def data_received(self, data: bytes) -> None:
        if not self._asked and data:
            if self.transport is not None:
                self.transport.close()
            return
        ResponseHandler.data_received(self, data)
        final = self._final
        if final is None:
            if self._asked and data and self.exception() is None:
                # an interim 1xx answer made aiohttp drop the read timeout (it treats
                # the 1xx's empty body as the end of the answer): the final answer is
                # still awaited, and a server that stalls after a 100 Continue is cut
                # off by the read timeout, not only by the deadline
                self._reschedule_timeout()
        elif final.is_eof():
            self._asked = False


class _Connector(aiohttp.TCPConnector):
    """aiohttp's connector, its connections spoken to by :class:`_AnswersOnly`."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._factory = functools.partial(_AnswersOnly, loop=self._loop)  # type: ignore[assignment]


async def _body(response: aiohttp.ClientResponse) -> bytes:
    """The decoded body of ``response``, at most ``MAX_BODY_BYTES`` (see the module)."""
    declared = response.content_length
    if declared is not None and declared > MAX_BODY_BYTES:
        raise BodyTooLarge(f"Content-Length {declared}")
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := await response.content.readany():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise BodyTooLarge(f"more than {MAX_BODY_BYTES} bytes decoded")
            chunks.append(chunk)
    except (aiohttp.ClientPayloadError, ContentEncodingError) as e:
        undecodable = _encoding_error(e)
        if undecodable is None:
            raise  # cut short: a transport error, retried
        if response.status == 200:
            raise BadEncoding(undecodable, response.status) from None
        return b""  # an error answer: its status and headers still count
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _encoding_error(e: BaseException) -> str | None:
    """What aiohttp said of a body its ``Content-Encoding`` does not decode (raised as
    is, or as the cause of a ``ClientPayloadError``); None for any other payload error."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, ContentEncodingError):
            return str(seen.message)
        seen = seen.__cause__
    text = " ".join(str(e).split())
    return text if "Can not decode content-encoding" in text else None
