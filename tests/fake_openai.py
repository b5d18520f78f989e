"""A fake OpenAI-compatible server on 127.0.0.1 for the runner's tests and benchmark.

``/v1/chat/completions`` and ``/v1/moderations`` answer with scripted scores: every
request names its items by the marker ``item-<digits>`` in its text (the test datasets put
one in each row; other texts get a key from their hash), and each item's scores are
:func:`scripted_scores` of its number, so a test can check every score that reaches the
run file. Faults are scripted per item as a
list consumed one per request (``server.faults["item-00007"] = ["429", "500"]``: the first
request of that item gets a 429, the second a 500, the third the answer) or drawn for a
fraction of first attempts (``fault_rate``). Every request is logged (item keys, path,
time, the status sent, the connection it came on) for assertions.

Faults: ``429`` (with ``Retry-After``), ``500``/``502``/``503``, ``400``, ``401``,
``reset`` (the connection is closed without an answer), ``slow`` (the answer comes after
``slow_s``), ``malformed`` (a 200 whose body is not JSON), ``truncated`` (a 200 whose body
stops before its Content-Length, then the connection closes), ``refusal`` (a 200 whose
answer is a refusal). Hostile answers: ``gzip_bomb`` (a 200 whose gzip body decodes to ``bomb_bytes`` bytes),
``nan`` (a 200 whose JSON holds NaN), ``html`` (a 502 HTML page, a CDN's), ``empty`` (a 200 with
an empty body), ``chunked_cut`` (a chunked 200 cut before its last chunk), ``redirect``
(a 307 to another host), ``retry_days`` (a 500 with a ten-day ``Retry-After``),
``quota`` (OpenAI's 429 for an account without quota: ``insufficient_quota``, which no
wait changes), ``no_retry`` (a 503 with ``x-should-retry: false``), ``retry_400`` (a 400
with ``x-should-retry: true``: openai-python obeys the header either way),
``in_band_429`` / ``in_band_400`` (a 200 whose body is only an ``error`` with that
code, as OpenRouter answers when the provider fails after the status was sent),
``no_choices`` (a 200 whose ``choices`` list is empty),
``in_band_502_choices`` (such a 200 whose body also holds a choice with no content and
``finish_reason`` ``error``, the shape of OpenRouter's mid-generation error),
``choice_error`` (a 200 whose one choice has no content and ``finish_reason`` ``error``,
with the error in the choice, as OpenRouter and Mistral end an answer a server error
stopped before its first word),
``echo_500`` (a 500 whose message quotes the request line and headers, as a debug
error page does), ``echo_200`` (the answer, with a ``debug`` field quoting the request
line and headers, as a debugging proxy adds), ``unsupported`` (OpenAI's 400 ``unsupported_parameter`` for
``max_tokens`` sent to a reasoning model; a model in ``reasoning_models`` answers so to
every request that sends ``max_tokens``), ``vllm_400`` (a 400 in vLLM's error form,
``{"object": "error", "message": ...}``),
``bad_gzip`` (a 200 whose gzip body is corrupt; ``bad_gzip_401``, ``bad_gzip_429``: such
an error answer, with ``Retry-After: 0``), ``close_after`` (the answer, then the
connection is closed without ``Connection: close``), ``dribble`` (the answer sent a few
bytes at a time), ``trickle`` (the status line, headers and body sent ``trickle_bytes``
at a time, one piece every ``trickle_s`` seconds: with the defaults, one byte every
0.5 s, which no read timeout ever cuts off). ``start(tls=context)`` serves HTTPS with
that server-side context. ``require_key`` makes every request without ``Bearer <key>``
a 401 whose message quotes the key given, as OpenAI's does.

Per item, ``delays[key]`` adds seconds before its answer (after the global ``latency``)
and ``usage[key]`` replaces the usage block of its scripted chat answer (the default:
20 prompt, 10 completion tokens).

Routes are matched as a real server matches them, on the path alone and whole:
``/v1/chat/completions``, ``/v1/completions`` (a raw ``prompt``, as vLLM and llama.cpp
serve it: answered from ``answers``, whose choices then hold ``text``, else ``safe``)
and ``/v1/moderations`` (``url``), and Azure OpenAI's
``/openai/deployments/<name>/chat/completions``, which needs an ``api-version`` query
parameter (a 404 without one) and takes the key in an ``api-key`` header, not as a
bearer token (``azure_url(name)``). Anything else is a 404.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import re
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toxeval.taxonomy import Taxonomy, load_taxonomy

ITEM = re.compile(r"item-\d+")
AZURE_CHAT = re.compile(r"/openai/deployments/[^/]+/chat/completions")
RETRYABLE_FAULTS = ("429", "500", "502", "503", "reset", "malformed", "truncated")
MODERATION_NAMES = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)


def item_number(key: str) -> int:
    return int(key.split("-")[1])


def text_key(text: str) -> str:
    """The item marker in ``text``, or for a text without one (the demo set's) a stable
    key made from its hash."""
    found = ITEM.findall(text)
    if found:
        return str(found[-1])
    return f"item-{int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100000:05d}"


def scripted_scores(key: str, ids: tuple[str, ...]) -> dict[str, float]:
    """The graded scores the server answers for item ``key`` (multiples of 1/8, exact)."""
    n = item_number(key)
    return {c: ((n * 5 + j * 3) % 9) / 8.0 for j, c in enumerate(ids)}


def logprob_yes(score: float) -> float:
    """P(yes) the server's logprobs give for a scripted score (kept inside (0, 1))."""
    return 0.05 + 0.9 * score


@dataclass(frozen=True)
class Logged:
    keys: tuple[str, ...]
    path: str
    time: float
    status: int | str


class FakeOpenAI:
    """The server; ``start()`` binds a free port on 127.0.0.1, ``url`` is its ``/v1``."""

    def __init__(self, taxonomy: Taxonomy | str = "toxeval-15") -> None:
        self.taxonomy = load_taxonomy(taxonomy) if isinstance(taxonomy, str) else taxonomy
        self.faults: dict[str, list[str]] = {}
        self.fault_rate = 0.0
        self.random = random.Random(0)
        self.latency = 0.0
        # per item key: seconds added before that item's request is answered, and the
        # usage block its chat answer carries instead of the default one
        self.delays: dict[str, float] = {}
        self.usage: dict[str, dict[str, Any]] = {}
        self.slow_s = 1.0
        self.trickle_s = 0.5
        self.trickle_bytes = 1
        self.retry_after = "0"
        self.bomb_bytes = 64 * 1024 * 1024
        self.require_key: str | None = None
        # models that answer max_tokens as OpenAI's reasoning models do (400
        # unsupported_parameter) and take max_completion_tokens
        self.reasoning_models: set[str] = set()
        # item key -> the choice (message, logprobs, finish_reason) a chat request naming
        # it is answered with, instead of the scripted scores (guard answers, logprobs), or
        # a function of the request body that returns it
        self.answers: dict[str, Any] = {}
        # models answered as guards whatever the item: Llama Guard's "unsafe\nS1,S10", or
        # a single-policy guard's "Yes" / "No", with TOP_ALTERNATIVES logprobs per token
        # when asked for (the runner's bench: a guard request's cost on the client)
        self.guard_models: set[str] = set()
        self.policy_models: set[str] = set()
        self.log: list[Logged] = []
        self.headers_seen: list[dict[str, str]] = []
        self.bodies: list[Any] = []  # every decoded request body
        self.connections: set[Any] = set()  # the client address of every connection served
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._server: ThreadingHTTPServer | None = None
        self._scheme = "http"

    # ------------------------------------------------------------------ lifecycle
    def start(self, tls: ssl.SSLContext | None = None) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            self._scheme = "https"
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"{self._scheme}://127.0.0.1:{self._server.server_address[1]}/v1"

    def azure_url(self, deployment: str, api_version: str = "2024-10-21") -> str:
        """The base URL of an Azure OpenAI deployment on this server."""
        assert self._server is not None
        port = self._server.server_address[1]
        return (
            f"{self._scheme}://127.0.0.1:{port}/openai/deployments/{deployment}"
            f"?api-version={api_version}"
        )

    # ------------------------------------------------------------------ queries
    def requested(self, key: str) -> int:
        """How many requests named item ``key``."""
        with self._lock:
            return sum(key in e.keys for e in self.log)

    def answered(self) -> list[str]:
        """Item keys of every request answered with a usable 200, in order."""
        with self._lock:
            return [k for e in self.log if e.status == 200 for k in e.keys]

    # ------------------------------------------------------------------ behaviour
    def fault_for(self, keys: tuple[str, ...]) -> str | None:
        with self._lock:
            for k in keys:
                queue = self.faults.get(k)
                if queue:
                    return queue.pop(0)
            if self.fault_rate and keys and keys[0] not in self._seen:
                self._seen.add(keys[0])
                if self.random.random() < self.fault_rate:
                    return self.random.choice(RETRYABLE_FAULTS)
            for k in keys:
                self._seen.add(k)
        return None

    def record(self, keys: tuple[str, ...], path: str, status: int | str) -> None:
        with self._lock:
            self.log.append(Logged(keys, path, time.monotonic(), status))

    def chat_body(self, model: str, keys: tuple[str, ...], body: dict[str, Any]) -> dict[str, Any]:
        if model in self.guard_models or model in self.policy_models:
            scripted: Any = guard_choice(model in self.policy_models, keys, completions=False)
            return self._choice_body(model, scripted, body)
        if keys and keys[0] in self.answers:
            scripted = self.answers[keys[0]]
            return self._choice_body(model, scripted, body)
        ids = self.taxonomy.ids
        scores = scripted_scores(keys[0], ids) if keys else {}
        n = int(body.get("n") or 1)
        logprobs = None
        if body.get("logprobs"):
            tokens = []
            for c, v in scores.items():
                p = logprob_yes(v)
                word = " yes" if p >= 0.5 else " no"
                alts = [
                    {"token": " yes", "logprob": math.log(p)},
                    {"token": " no", "logprob": math.log(1.0 - p)},
                ]
                tokens += [
                    {"token": f"{c}:", "logprob": -0.01, "top_logprobs": []},
                    {
                        "token": word,
                        "logprob": max(a["logprob"] for a in alts),
                        "top_logprobs": alts,
                    },
                    {"token": "\n", "logprob": -0.01, "top_logprobs": []},
                ]
            content = "".join(t["token"] for t in tokens)
            logprobs = {"content": tokens}
        else:
            content = json.dumps(scores)
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": content},
                "logprobs": logprobs,
                "finish_reason": "stop",
            }
            for i in range(n)
        ]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": choices,
            "usage": self.usage.get(
                keys[0] if keys else "",
                {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
            ),
        }

    def _choice_body(self, model: str, scripted: Any, body: dict[str, Any]) -> dict[str, Any]:
        choice = {
            "index": 0,
            "finish_reason": "stop",
            **(scripted(body) if callable(scripted) else scripted),
        }
        if not body.get("logprobs"):
            choice["logprobs"] = None  # logprobs only when asked for, as servers do
        return {"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                "choices": [choice]}  # fmt: skip

    def completion_body(
        self, model: str, keys: tuple[str, ...], body: dict[str, Any]
    ) -> dict[str, Any]:
        """A ``/completions`` answer: the scripted choice of the item (``text``,
        ``logprobs``, ``finish_reason``), else ``safe`` without logprobs."""
        scripted = self.answers.get(keys[0]) if keys else None
        if model in self.guard_models or model in self.policy_models:
            scripted = guard_choice(model in self.policy_models, keys, completions=True)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "text": "safe"}
        if scripted is not None:
            choice.update(scripted(body) if callable(scripted) else scripted)
        if not body.get("logprobs"):
            choice["logprobs"] = None  # logprobs only when asked for, as servers do
        return {"id": "cmpl-fake", "object": "text_completion", "model": model,
                "choices": [choice]}  # fmt: skip

    def moderation_body(self, model: str, keys: list[str]) -> dict[str, Any]:
        results = []
        for key in keys:
            n = item_number(key)
            cs = {name: ((n + j) % 9) / 8.0 for j, name in enumerate(MODERATION_NAMES)}
            results.append(
                {
                    "flagged": any(v >= 0.5 for v in cs.values()),
                    "categories": {k: v >= 0.5 for k, v in cs.items()},
                    "category_scores": cs,
                }
            )
        return {"id": "modr-fake", "model": model, "results": results}


class _Server(ThreadingHTTPServer):
    # 64 clients connect at once; the default backlog of 5 would reset some of them
    request_queue_size = 256
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (the runner cancelled on Ctrl-C, closed its pool) is
        not a server error worth a traceback on stderr."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms per request)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        body = {"error": {"message": message, "type": "fake", "code": status}}
        self._send(status, json.dumps(body).encode(), headers)

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        with fake._lock:
            fake.headers_seen.append(dict(self.headers.items()))
            fake.connections.add(self.client_address)
        if len(raw) < length:  # the client hung up before its body arrived
            self.close_connection = True
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._error(400, "body is not JSON")
            return
        with fake._lock:
            fake.bodies.append(body)
        path = self.path  # as sent, query included
        parts = urlsplit(path)
        route = parts.path
        azure = AZURE_CHAT.fullmatch(route) is not None
        if azure and not parse_qs(parts.query).get("api-version"):
            azure = False  # Azure OpenAI answers 404 without an api-version
        if route == "/v1/moderations":
            inputs = body.get("input")
            texts = inputs if isinstance(inputs, list) else [inputs]
            keys = tuple(text_key(str(t)) for t in texts)
        elif route == "/v1/completions":
            keys = (text_key(str(body.get("prompt"))),)
        elif route == "/v1/chat/completions" or azure:
            text = " ".join(
                str(m.get("content")) for m in body.get("messages", []) if isinstance(m, dict)
            )
            keys = (text_key(text),)
        else:
            fake.record((), path, 404)
            self._error(404, "Resource not found")
            return
        if fake.require_key is not None:
            if azure:  # the key in api-key; a bearer token would have to be an Entra ID one
                given = self.headers.get("api-key", "")
                bad = "Access denied due to invalid subscription key or wrong API endpoint."
            else:
                auth = self.headers.get("Authorization", "")
                given = auth.removeprefix("Bearer ")
                bad = f"Incorrect API key provided: {given}."
                given = given if auth.startswith("Bearer ") else ""
            if given != fake.require_key:
                fake.record(keys, path, 401)
                self._error(401, bad)
                return
        delay = fake.latency + sum(fake.delays.get(k, 0.0) for k in keys)
        if delay:
            time.sleep(delay)
        fault = fake.fault_for(keys)
        if body.get("model") in fake.reasoning_models and "max_tokens" in body:
            fault = "unsupported"
        fake.record(keys, path, fault or 200)
        if fault == "429":
            self._error(429, "rate limited", {"Retry-After": fake.retry_after})
        elif fault in ("500", "502", "503", "400", "401"):
            self._error(int(fault), f"injected {fault}")
        elif fault == "quota":
            message = "You exceeded your current quota, please check your plan and billing details."
            error = {"message": message, "type": "insufficient_quota", "param": None}
            payload = json.dumps({"error": {**error, "code": "insufficient_quota"}})
            self._send(429, payload.encode())
        elif fault == "echo_500":  # a debug error page: the request line and headers quoted
            said = " ".join([self.requestline, *(f"{k}: {v}" for k, v in self.headers.items())])
            self._error(500, f"internal error handling {said}")
        elif fault == "vllm_400":
            message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
            error = {"object": "error", "message": message, "type": "BadRequestError"}
            self._send(400, json.dumps({**error, "param": None, "code": 400}).encode())
        elif fault in ("in_band_429", "in_band_400"):  # OpenRouter: a 200 sent before the
            # upstream provider failed, with the provider's error in the body
            code = int(fault[-3:])
            error = {"message": f"Provider returned error {code}", "code": code}
            meta = {"provider_name": "Google AI Studio"}
            self._send(200, json.dumps({"error": {**error, "metadata": meta}}).encode())
        elif fault == "in_band_502_choices":  # OpenRouter: the provider failed mid-answer
            choice = {"index": 0, "message": {"role": "assistant", "content": ""}}
            out = {
                "id": "gen-1741570283-PpW1bXkzvJ4c5mSx0b1e",
                "provider": "Mistral",
                "error": {"code": 502, "message": "Provider disconnected unexpectedly"},
                "choices": [{**choice, "finish_reason": "error"}],
            }
            self._send(200, json.dumps(out).encode())
        elif fault == "no_choices":
            self._send(200, json.dumps({"id": "chatcmpl-0", "choices": []}).encode())
        elif fault == "choice_error":
            error = {"code": 502, "message": "Upstream error from Mistral: Service unavailable"}
            choice = {"index": 0, "message": {"role": "assistant", "content": ""}}
            out = {
                "id": "gen-1741570284",
                "choices": [{**choice, "finish_reason": "error", "error": error}],
            }
            self._send(200, json.dumps(out).encode())
        elif fault == "unsupported":  # OpenAI, for a parameter the model does not take
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            error = {"message": message, "type": "invalid_request_error", "param": "max_tokens"}
            self._send(
                400, json.dumps({"error": {**error, "code": "unsupported_parameter"}}).encode()
            )
        elif fault == "no_retry":
            self._error(503, "overloaded; do not retry", {"x-should-retry": "false"})
        elif fault == "retry_400":
            self._error(400, "try again", {"x-should-retry": "true"})
        elif fault == "reset":
            self.close_connection = True
            self.connection.close()
        elif fault == "slow":
            time.sleep(fake.slow_s)
            self._send(200, json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode())
        elif fault == "malformed":
            self._send(200, b'{"choices": [ this is not json')
        elif fault == "truncated":
            payload = json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()
        elif fault == "gzip_bomb":
            packed = gzip.compress(b" " * fake.bomb_bytes, compresslevel=1)
            self._send(200, packed, {"Content-Encoding": "gzip"})
        elif fault == "nan":
            self._send(200, b'{"choices": [], "usage": {"prompt_tokens": NaN}}')
        elif fault == "html":  # a CDN's error page: its words are in the title, far down
            page = (
                '<!DOCTYPE html>\n<!--[if lt IE 7]> <html class="no-js ie6 oldie" '
                'lang="en-US"> <![endif]-->\n<html lang="en-US">\n<head>\n'
                + '<meta name="robots" content="noindex, nofollow" />\n' * 6
                + '<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/main.css" />\n'
                + "<title>api.example.com | 502: Bad gateway</title>\n</head>\n<body>"
                + "<div>" * 40
                + "<h1>Bad gateway</h1><span>Error code 502</span></body></html>"
            ).encode()
            self._send(502, page, {"Content-Type": "text/html; charset=UTF-8"})
        elif fault == "empty":
            self._send(200, b"")
        elif fault == "chunked_cut":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b'10\r\n{"choices": [{"\r\n')
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()
        elif fault == "redirect":
            self._send(307, b"", {"Location": "http://127.0.0.2:1/v1/chat/completions"})
        elif fault == "bad_gzip":
            packed = gzip.compress(json.dumps(fake.chat_body("", keys, body)).encode())
            self._send(200, packed[:10] + b"\xff" * 8 + packed[18:], {"Content-Encoding": "gzip"})
        elif fault in ("bad_gzip_401", "bad_gzip_429"):
            status = int(fault[-3:])
            packed = gzip.compress(b'{"error": {"message": "no"}}')
            headers = {"Content-Encoding": "gzip", "Retry-After": "0"}
            self._send(status, packed[:10] + b"\xff" * 8 + packed[18:], headers)
        elif fault == "close_after":
            self._send(200, json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode())
            self.wfile.flush()
            self.close_connection = True
        elif fault == "dribble":
            payload = json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode()
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n"
            ).encode()
            whole = head + payload
            for i in range(0, len(whole), 7):
                self.wfile.write(whole[i : i + 7])
                self.wfile.flush()
                time.sleep(0.001)
        elif fault == "trickle":
            payload = json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode()
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n"
            ).encode()
            whole, step = head + payload, max(1, fake.trickle_bytes)
            for i in range(0, len(whole), step):
                time.sleep(fake.trickle_s)
                self.wfile.write(whole[i : i + step])  # fails once the client hangs up
                self.wfile.flush()
        elif fault == "retry_days":
            self._error(500, "come back later", {"Retry-After": str(10 * 86400)})
        elif fault == "echo_200":  # a debugging proxy: the answer, with the request quoted
            out = fake.chat_body(body.get("model", ""), keys, body)
            said = " ".join([self.requestline, *(f"{k}: {v}" for k, v in self.headers.items())])
            out["debug"] = {"request": said, "headers": dict(self.headers.items())}
            self._send(200, json.dumps(out).encode())
        elif fault == "refusal":
            out = fake.chat_body(body.get("model", ""), keys, body)
            out["choices"][0]["message"]["content"] = "I'm sorry, but I can't help with that."
            self._send(200, json.dumps(out).encode())
        elif route == "/v1/completions":
            out = fake.completion_body(body.get("model", ""), keys, body)
            self._send(200, json.dumps(out).encode())
        elif route == "/v1/moderations":
            self._send(
                200, json.dumps(fake.moderation_body(body.get("model", ""), list(keys))).encode()
            )
        else:
            self._send(200, json.dumps(fake.chat_body(body.get("model", ""), keys, body)).encode())


TOP_ALTERNATIVES = 20  # what the runner asks for (top_logprobs / logprobs)


def guard_choice(policy: bool, keys: tuple[str, ...], *, completions: bool) -> dict[str, Any]:
    """A guard's answer with TOP_ALTERNATIVES logprobs per token, in the chat or the
    completions form: ``Yes`` / ``No`` by the item's number (``policy``), else Llama
    Guard's ``unsafe\nS1,S10`` as Llama 3 tokenizes it; the alternatives past the ones
    that matter are filler tokens of small probability."""
    if policy:
        word = "Yes" if keys and item_number(keys[0]) % 2 else "No"
        tokens = [(word, {"Yes": 0.6, "No": 0.3, " yes": 0.05})]
    else:
        tokens = [
            ("unsafe", {"unsafe": 0.8, "safe": 0.15}),
            ("\n", {"\n": 0.95}),
            ("S", {"S": 0.95}),
            ("1", {"1": 0.6, "10": 0.3, "2": 0.05}),
            (",", {",": 0.95}),
            ("S", {"S": 0.95}),
            ("10", {"10": 0.9, "1": 0.05}),
        ]
    positions = []
    for tok, alts in tokens:
        rest = (1.0 - sum(alts.values())) / (TOP_ALTERNATIVES - len(alts))
        full = {**alts, **{f"<filler{j}>": rest for j in range(TOP_ALTERNATIVES - len(alts))}}
        positions.append((tok, {t: math.log(p) for t, p in full.items()}))
    text = "".join(t for t, _ in positions)
    if completions:
        lp: dict[str, Any] = {
            "tokens": [t for t, _ in positions],
            "token_logprobs": [a[t] for t, a in positions],
            "top_logprobs": [a for _, a in positions],
        }
        return {"text": text, "logprobs": lp}
    content = [
        {"token": t, "logprob": a[t],
         "top_logprobs": [{"token": x, "logprob": v} for x, v in a.items()]}
        for t, a in positions
    ]  # fmt: skip
    return {"message": {"role": "assistant", "content": text}, "logprobs": {"content": content}}


def write_dataset(
    path: Any, n: int, taxonomy: Taxonomy | None = None, *, response: bool = False
) -> None:
    """A JSONL dataset of ``n`` rows ``r<i>`` whose texts carry the marker ``item-<i>``;
    labels: category ``i % K`` on rows with ``i % 4 != 0`` (every category has positives)."""
    tax = taxonomy or load_taxonomy("toxeval-15")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            row: dict[str, Any] = {
                "id": f"r{i}",
                "text": f"please judge item-{i:05d}",
                "labels": [tax.ids[i % tax.k]] if i % 4 else [],
            }
            if response:
                row["text"] = f"a prompt {i}"
                row["response"] = f"a reply to item-{i:05d}"
            f.write(json.dumps(row) + "\n")


def main() -> None:
    """``python tests/fake_openai.py [--latency S] [--guard-model M] [--policy-model M]``:
    serve until killed, printing the
    base URL on the first line of stdout (benches/bench_runner.py runs it this way)."""
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--guard-model", action="append", default=[], metavar="MODEL")
    ap.add_argument("--policy-model", action="append", default=[], metavar="MODEL")
    args = ap.parse_args()
    server = FakeOpenAI()
    server.latency = args.latency
    server.guard_models = set(args.guard_model)
    server.policy_models = set(args.policy_model)
    server.start()
    print(server.url, flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin (or kills us)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
