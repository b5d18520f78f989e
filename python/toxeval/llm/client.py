"""The HTTP side of the LLM runner: one async client for OpenAI-compatible servers.

Modelled on openai-python's ``_base_client.py``: split connect/read timeouts and a deadline
for each attempt as a whole (``request_deadline``, so that a server that trickles bytes is
cut off like a silent one: see :mod:`toxeval.llm.connections`), retries with
exponential backoff and full jitter on 408, 409, 429, 5xx, timeouts and connection errors,
``Retry-After`` (seconds or an HTTP date) and ``retry-after-ms`` honoured, and no retry on
the statuses that cannot succeed the second time (400, 401, 403, 404, 422: a clear error).
A server's ``x-should-retry: true|false`` overrides the status, as in openai-python; a
429 ``insufficient_quota`` (an account without credit) and a 400 ``unsupported_parameter``
or ``unsupported_value`` (an option the model does not take) are never retried and stop
the run like a 401: every request would get them.
A 200 whose body is not a JSON object (malformed or truncated), or a body whose
``Content-Encoding`` does not decode, is retried a bounded number of times, then
reported as a failure of that request. A 200 whose body holds an ``error``, alone or
beside ``choices``, or whose every choice ``finish_reason`` ``error`` ended with no content
(OpenRouter sends its status before the provider runs, and a
provider's failure then comes in the body) is a failed attempt too, retried unless its
``code`` is a 4xx that is never retried. The connections themselves (keep-alive, TLS,
proxies, the body cap) are :mod:`toxeval.llm.connections`.

Optional requests-per-minute and tokens-per-minute limiters (token buckets refilled
continuously) pace the requests before they are sent.

The API key is sent in one header and nowhere else (:func:`key_headers`: a bearer
token, or Azure OpenAI's ``api-key``): no message, log line or exception built here
contains it (an error body that echoes it is redacted).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from toxeval.llm.connections import (
    MAX_BODY_BYTES,
    TIMEOUTS,
    TRANSPORT_ERRORS,
    BadEncoding,
    BodyTooLarge,
    Connections,
    DeadlineExceeded,
)
from toxeval.llm.error_bodies import error_detail, fails_alike, in_band_detail, in_band_error
from toxeval.llm.requests import endpoint, public_url, url_secrets

__all__ = [
    "DEFAULT_REQUEST_DEADLINE",
    "MAX_BODY_BYTES",
    "AuthenticationFailed",
    "Client",
    "RateLimiter",
    "Reply",
    "RequestFailed",
    "RequestRejected",
    "RetryPolicy",
    "key_headers",
    "redact_json",
    "retry_after_seconds",
]

RETRY_STATUSES = frozenset({408, 409, 429})  # and every 5xx
# 404 stops the run too: a wrong base URL or model name fails every request alike; so
# does a redirect (never followed: the POST body and the key must not go elsewhere)
STOP_STATUSES = frozenset({301, 302, 303, 307, 308, 401, 403, 404})
MAX_RETRY_AFTER = 120.0  # seconds; a longer Retry-After is capped, not obeyed blindly
# seconds one attempt may take in all, answer included (openai-python's total timeout)
DEFAULT_REQUEST_DEADLINE = 600.0
# Azure OpenAI's hosts: an API key goes in the ``api-key`` header there (a bearer token
# must be an Entra ID token), as openai-python's AzureOpenAI sends it
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")
_AZURE_PATH = "/openai/deployments/"  # the deployments path, also behind a gateway


class RequestFailed(Exception):
    """A request that did not give a usable answer after its retries (message without
    secrets). ``status_code`` is the last HTTP status (None: no response)."""

    def __init__(self, message: str, *, status_code: int | None, attempts: int) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts


class RequestRejected(RequestFailed):
    """The server refused the request with a status that retrying cannot change."""


class AuthenticationFailed(RequestRejected):
    """401/403/404, a redirect, a 429 ``insufficient_quota`` or a 400 for an option the
    model does not take: the key, the base URL, the model, the account or the options are
    wrong; every request would fail alike, so the run stops at the first one."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. The delay before retry ``n`` (0-based) is drawn
    uniformly from ``[0, min(max_delay, base_delay * 2**n)]`` (full jitter) unless the
    server says how long to wait."""

    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    malformed_retries: int = 2  # extra attempts for a 200 whose body is not JSON
    max_retry_after: float = MAX_RETRY_AFTER  # a longer Retry-After is capped (and said)

    def backoff(self, retry: int) -> float:
        return random.uniform(0.0, min(self.max_delay, self.base_delay * 2.0**retry))


@dataclass(frozen=True)
class Reply:
    """A decoded HTTP 200 answer: ``latency_s`` from the first attempt to the body read
    (waits and retries included), ``ttfb_s`` from sending the attempt that was answered
    to its head arriving (None: not measured)."""

    body: dict[str, Any]
    status_code: int
    attempts: int
    latency_s: float
    ttfb_s: float | None = None


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the server asks for: ``retry-after-ms`` (milliseconds), else
    ``Retry-After`` as seconds or as an HTTP date; None when absent or unreadable.
    Negative waits become 0, long ones are capped at ``MAX_RETRY_AFTER``."""
    wait = requested_wait(headers, now)
    return None if wait is None else min(wait, MAX_RETRY_AFTER)


def requested_wait(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the server asks for, uncapped (>= 0); None when absent or unreadable."""
    wait: float | None = None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            wait = float(ms) / 1000.0
        except ValueError:
            wait = None
    ra = headers.get("retry-after")
    if wait is None and ra is not None:
        try:
            wait = float(ra)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(ra)
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None:
                wait = when.timestamp() - (time.time() if now is None else now)
    if wait is None or wait != wait:  # absent or NaN
        return None
    return max(wait, 0.0)


class RateLimiter:
    """A token bucket of ``per_minute`` tokens, refilled continuously. ``acquire(n)``
    waits until ``n`` tokens are there (a request larger than the bucket waits for a
    full bucket), then takes them."""

    def __init__(self, per_minute: float) -> None:
        if not per_minute > 0:
            raise ValueError(f"a rate limit must be > 0 per minute, got {per_minute}")
        self.capacity = float(per_minute)
        self.rate = float(per_minute) / 60.0
        self._tokens = self.capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(float(amount), self.capacity)
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
                self._stamp = now
                if self._tokens >= amount:
                    self._tokens -= amount
                    return
                await asyncio.sleep((amount - self._tokens) / self.rate)


def key_headers(base_url: str, api_key: str) -> dict[str, str]:
    """The header that carries ``api_key`` to ``base_url``: ``api-key: KEY`` for Azure
    OpenAI (a host of Azure's, or its ``/openai/deployments/`` path behind another host),
    else ``Authorization: Bearer KEY``."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").rstrip(".")
    if host.endswith(_AZURE_HOSTS) or (parts.path.rstrip("/") + "/").startswith(_AZURE_PATH):
        return {"api-key": api_key}
    return {"Authorization": f"Bearer {api_key}"}


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with each of ``secrets`` (and any 8+ character piece of one a server
    echoes, such as OpenAI's ``sk-abc...xyz`` hint) replaced by ``[redacted]``; the
    longest first, so that no part of a longer secret is left beside a shorter one."""
    out = text
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        out = out.replace(secret, "[redacted]")
        if len(secret) >= 16:
            for piece in (secret[:8], secret[-8:]):
                out = out.replace(piece, "[redacted]")
    return out


def redact_json(value: Any, *secrets: str | None) -> Any:
    """``value`` (a decoded JSON answer) with :func:`redact` applied to every string in it,
    keys included; the same object when there is no secret to look for."""
    live = [s for s in secrets if s]
    if not live:
        return value
    if isinstance(value, str):
        return redact(value, *live)
    if isinstance(value, list):
        return [redact_json(v, *live) for v in value]
    if isinstance(value, dict):
        return {redact(str(k), *live): redact_json(v, *live) for k, v in value.items()}
    return value


class Client:
    """An async client for ``base_url`` (e.g. ``https://api.openai.com/v1``).

    ``post(path, body)`` returns the decoded 200 answer or raises :class:`RequestFailed`
    (:class:`RequestRejected` for a status that is never retried,
    :class:`AuthenticationFailed` for 401/403/404). ``retries`` counts every retry made.
    Use as ``async with Client(...) as c``."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        concurrency: int = 32,
        rpm: float | None = None,
        tpm: float | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        request_deadline: float = DEFAULT_REQUEST_DEADLINE,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = api_key or None
        # what a server quoting the request would say of the base URL's own secrets
        self._url_secrets = url_secrets(self.base_url)
        self.retry = retry or RetryPolicy()
        self.requests_limiter = RateLimiter(rpm) if rpm else None
        self.tokens_limiter = RateLimiter(tpm) if tpm else None
        self.retries = 0
        self.capped_waits = 0  # Retry-After longer than MAX_RETRY_AFTER, capped
        self.responses = 0  # HTTP answers received (of any status)
        headers = {"Content-Type": "application/json", "User-Agent": "toxeval"}
        if self._key:
            headers.update(key_headers(self.base_url, self._key))
        self._connections = Connections(
            self.base_url,
            headers,
            slots=concurrency,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            deadline=request_deadline,
        )

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._connections.aclose()

    def _safe(self, text: str) -> str:
        return redact(text, self._key, *self._url_secrets)

    def redact_body(self, body: Any) -> Any:
        """A 200 answer's decoded body as a run file may keep it: the API key and the base
        URL's secrets replaced wherever the server echoed them (a debugging proxy that
        quotes the request headers), as in error messages."""
        return redact_json(body, self._key, *self._url_secrets)

    async def post(self, path: str, body: dict[str, Any], *, tokens: int = 0) -> Reply:
        """POST ``body`` as JSON to ``path`` under ``base_url`` (see
        :func:`~toxeval.llm.requests.endpoint`), retrying as the module says."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        policy = self.retry
        retries = 0  # retries made for errors of any kind
        malformed = 0
        status: int | None = None
        started = time.monotonic()
        while True:
            if self.requests_limiter is not None:
                await self.requests_limiter.acquire(1)
            if self.tokens_limiter is not None and tokens:
                await self.tokens_limiter.acquire(tokens)
            wait: float | None = None
            bad_body = False  # an answer whose body is not what it must be: bounded retries
            try:
                response = await self._connections.send(path, payload)
            except BodyTooLarge as e:
                raise RequestFailed(
                    self._safe(f"POST {path}: the answer body is too large ({e}); not read"),
                    status_code=None,
                    attempts=retries + 1,
                ) from None
            except DeadlineExceeded as e:
                problem = f"timed out ({e})"
                status = None
            except TIMEOUTS as e:
                problem = f"timed out ({type(e).__name__})"
                status = None
            except TRANSPORT_ERRORS as e:
                problem = f"connection error ({type(e).__name__}: {e})"
                status = None
            except BadEncoding as e:
                self.responses += 1
                status = e.status_code
                problem = f"the answer body does not decode ({e})"
                bad_body = True
            else:
                self.responses += 1
                status = response.status_code
                content = response.body
                in_band: int | None = None
                if status == 200:
                    decoded = _json_object(content)
                    in_band = in_band_error(decoded)
                    if decoded is not None and in_band is None:
                        return Reply(
                            decoded,
                            status,
                            retries + 1,
                            time.monotonic() - started,
                            response.ttfb,
                        )
                if status == 200 and in_band is None:
                    problem = "the 200 answer is not a JSON object (malformed or truncated body)"
                    bad_body = True
                elif in_band is not None:
                    # an error the server could only put in the body: the status was sent
                    # before the model failed (OpenRouter); retried as its code says
                    detail = self._safe(in_band_detail(decoded, content))
                    what = f"error {in_band}" if in_band else "an error"
                    problem = f"HTTP 200 with {what} in its body: {detail}"
                    if 400 <= in_band < 500 and in_band not in RETRY_STATUSES:
                        raise RequestRejected(
                            self._safe(f"POST {path}: {problem} (not retried)"),
                            status_code=status,
                            attempts=retries + 1,
                        )
                else:
                    detail = self._safe(error_detail(content))
                    problem = f"HTTP {status}" + (f": {detail}" if detail else "")
                    alike = fails_alike(status, content)
                    if status in STOP_STATUSES or alike:
                        hint = alike or {
                            401: "check the API key (--api-key-env names the variable)",
                            403: "the key has no access to this model or endpoint",
                            404: "check --base-url and the model name",
                        }.get(status, "the server redirects; give the final URL as --base-url")
                        raise AuthenticationFailed(
                            self._safe(
                                f"POST {public_url(endpoint(self.base_url, path))}: {problem} ({hint})"
                            ),
                            status_code=status,
                            attempts=retries + 1,
                        )
                    if not _should_retry(status, response.headers):
                        raise RequestRejected(
                            self._safe(f"POST {path}: {problem} (not retried)"),
                            status_code=status,
                            attempts=retries + 1,
                        )
                    asked = requested_wait(response.headers)
                    cap = policy.max_retry_after
                    if asked is not None and asked > cap:
                        problem += f" (asked to wait {asked:.0f} s; capped at {cap:g} s)"
                        self.capped_waits += 1
                    wait = None if asked is None else min(asked, cap)
            if bad_body:
                malformed += 1
                if malformed > policy.malformed_retries:
                    raise RequestFailed(
                        self._safe(f"POST {path}: {problem}, {malformed} times"),
                        status_code=status,
                        attempts=retries + 1,
                    )
            if retries >= policy.max_retries:
                raise RequestFailed(
                    self._safe(f"POST {path}: {problem}; gave up after {retries + 1} attempts"),
                    status_code=status,
                    attempts=retries + 1,
                )
            await asyncio.sleep(policy.backoff(retries) if wait is None else wait)
            retries += 1
            self.retries += 1


def _should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an error status is retried: as the server says in ``x-should-retry``
    (``true`` / ``false``, as OpenAI sends it and openai-python obeys it), else for
    408, 409, 429 and 5xx."""
    said = headers.get("x-should-retry", "").strip().lower()
    if said in ("true", "false"):
        return said == "true"
    return status in RETRY_STATUSES or status >= 500


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_object(content: bytes) -> dict[str, Any] | None:
    """The body as a JSON object; None when it is not one (NaN and Infinity, which
    Python's json accepts but JSON does not, make it malformed; so does nesting too
    deep for the parser, which is a RecursionError)."""
    try:
        value = json.loads(content, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
