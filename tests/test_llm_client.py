"""toxeval.llm.client: retries, Retry-After, what is never retried, timeouts, rate
limits and redaction, against the fake server on 127.0.0.1 (tests/fake_openai.py)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from multidict import CIMultiDict
from toxeval.llm.client import (
    MAX_BODY_BYTES,
    AuthenticationFailed,
    Client,
    RateLimiter,
    RequestFailed,
    RequestRejected,
    RetryPolicy,
    key_headers,
    redact,
    retry_after_seconds,
)

FAST = RetryPolicy(max_retries=4, base_delay=0.001, max_delay=0.01)
BODY = {"model": "m", "messages": [{"role": "user", "content": "judge item-00007"}]}


def _post(server: FakeOpenAI, body: dict[str, Any] = BODY, **kw: Any) -> Any:
    async def go() -> Any:
        url = kw.pop("base_url", server.url)
        async with Client(url, kw.pop("key", None), retry=kw.pop("retry", FAST), **kw) as c:
            reply = await c.post("/chat/completions", body)
            return reply, c.retries

    return asyncio.run(go())


def test_retry_after_seconds_reads_ms_seconds_and_http_dates() -> None:
    h = CIMultiDict  # the headers of an aiohttp answer: names in any case
    assert retry_after_seconds(h({"retry-after-ms": "1500"})) == 1.5
    assert retry_after_seconds(h({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after_seconds(h({"retry-after": "3"})) == 3.0
    now = 1_000_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert retry_after_seconds(h({"retry-after": date}), now=now) == pytest.approx(7.0)
    assert retry_after_seconds(h({"retry-after": "-5"})) == 0.0
    assert retry_after_seconds(h({"retry-after": "99999"})) == 120.0
    assert retry_after_seconds(h({"retry-after": "soon"})) is None
    assert retry_after_seconds(h({})) is None


def test_backoff_is_full_jitter_under_the_exponential_cap() -> None:
    p = RetryPolicy(base_delay=0.5, max_delay=4.0)
    for retry, cap in ((0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (9, 4.0)):
        draws = [p.backoff(retry) for _ in range(200)]
        assert all(0.0 <= d <= cap for d in draws)
        assert max(draws) > cap / 2  # jittered over the whole range, not a fixed delay


@pytest.mark.parametrize("fault", ["429", "500", "502", "503", "reset", "malformed", "truncated"])
def test_transient_faults_are_retried_until_the_answer(fake_openai: FakeOpenAI, fault: str) -> None:
    fake_openai.faults["item-00007"] = [fault, fault]
    reply, retries = _post(fake_openai)
    assert reply.status_code == 200 and reply.attempts == 3 and retries == 2
    assert "choices" in reply.body
    assert fake_openai.requested("item-00007") == 3


def test_retry_after_is_honoured(fake_openai: FakeOpenAI) -> None:
    fake_openai.retry_after = "0.3"
    fake_openai.faults["item-00007"] = ["429"]
    _post(fake_openai)
    first, second = fake_openai.log
    assert second.time - first.time >= 0.3  # the server's wait, not the 1 ms backoff


def test_a_body_that_stays_malformed_fails_after_bounded_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["malformed"] * 10
    with pytest.raises(RequestFailed, match="not a JSON object") as e:
        _post(fake_openai)
    assert e.value.status_code == 200
    assert fake_openai.requested("item-00007") == FAST.malformed_retries + 1


def test_retries_stop_at_max_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["503"] * 10
    with pytest.raises(RequestFailed, match=r"HTTP 503.*gave up after 5 attempts"):
        _post(fake_openai)
    assert fake_openai.requested("item-00007") == FAST.max_retries + 1


@pytest.mark.parametrize("status", ["400"])
def test_client_errors_are_not_retried(fake_openai: FakeOpenAI, status: str) -> None:
    fake_openai.faults["item-00007"] = [status]
    with pytest.raises(
        RequestRejected, match=f"HTTP {status}: injected {status} \\(not retried\\)"
    ):
        _post(fake_openai)
    assert fake_openai.requested("item-00007") == 1


def test_401_is_an_authentication_failure_and_the_echoed_key_is_redacted(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.require_key = "sk-right-0000000000000000"
    wrong = "sk-wrong-1234567890abcdef"
    with pytest.raises(AuthenticationFailed) as e:
        _post(fake_openai, key=wrong)
    msg = str(e.value)
    assert "HTTP 401" in msg and "check the API key" in msg
    assert wrong not in msg and wrong[:8] not in msg and wrong[-8:] not in msg
    assert fake_openai.requested("item-00007") == 1


def test_the_key_is_sent_as_a_bearer_header(fake_openai: FakeOpenAI) -> None:
    fake_openai.require_key = "sk-right-0000000000000000"
    reply, _ = _post(fake_openai, key="sk-right-0000000000000000")
    assert reply.status_code == 200
    assert fake_openai.headers_seen[-1]["Authorization"] == "Bearer sk-right-0000000000000000"


def test_no_key_sends_no_authorization_header(fake_openai: FakeOpenAI) -> None:
    _post(fake_openai)
    assert "Authorization" not in fake_openai.headers_seen[-1]


def test_an_answer_slower_than_the_read_timeout_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.slow_s = 0.6
    fake_openai.faults["item-00007"] = ["slow"]
    reply, retries = _post(fake_openai, read_timeout=0.2)
    assert reply.status_code == 200 and retries == 1


def test_a_refused_connection_is_a_failure_after_retries() -> None:
    server = FakeOpenAI().start()
    url = server.url
    server.stop()  # nothing listens on that port any more

    async def go() -> None:
        async with Client(url, retry=RetryPolicy(max_retries=1, base_delay=0.001)) as c:
            await c.post("/chat/completions", BODY)

    with pytest.raises(RequestFailed, match="connection error"):
        asyncio.run(go())


def test_rate_limiter_waits_when_the_bucket_is_empty() -> None:
    async def go() -> float:
        lim = RateLimiter(600)  # 10 per second
        await lim.acquire(600)
        t0 = time.monotonic()
        await lim.acquire(3)
        return time.monotonic() - t0

    assert asyncio.run(go()) >= 0.25


def test_rate_limiter_rejects_a_non_positive_rate() -> None:
    with pytest.raises(ValueError, match="> 0 per minute"):
        RateLimiter(0)


def test_redact_removes_the_key_and_its_echoed_pieces() -> None:
    key = "sk-proj-abcdefgh12345678ZYXWVUTS"
    text = f"Incorrect API key provided: {key}. Also sk-proj-...ZYXWVUTS"
    out = redact(text, key)
    assert key not in out and "ZYXWVUTS" not in out and "[redacted]" in out
    assert redact("nothing", None) == "nothing"


def test_a_gzip_bomb_is_not_read_past_the_body_cap(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["gzip_bomb"]
    with pytest.raises(RequestFailed, match="too large") as e:
        _post(fake_openai)
    assert MAX_BODY_BYTES < fake_openai.bomb_bytes and e.value.attempts == 1


@pytest.mark.parametrize("fault", ["nan", "empty", "chunked_cut", "html"])
def test_hostile_answers_are_retried_until_the_answer(fake_openai: FakeOpenAI, fault: str) -> None:
    fake_openai.faults["item-00007"] = [fault, fault]
    reply, retries = _post(fake_openai)
    assert retries == 2 and reply.body["choices"]
    assert fake_openai.requested("item-00007") == 3


def test_nan_in_a_200_body_is_malformed_not_a_score(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["nan"] * 10
    with pytest.raises(RequestFailed, match="not a JSON object"):
        _post(fake_openai)


def test_a_redirect_is_not_followed_and_stops_the_run(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["redirect"]
    with pytest.raises(AuthenticationFailed, match=r"HTTP 307.*redirects") as e:
        _post(fake_openai)
    assert e.value.attempts == 1 and len(fake_openai.log) == 1


def test_a_retry_after_of_ten_days_is_capped_and_the_cap_is_said(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["retry_days"] * 10
    policy = RetryPolicy(max_retries=1, base_delay=0.001, max_retry_after=0.05)
    t0 = time.monotonic()
    with pytest.raises(RequestFailed, match=r"asked to wait 864000 s; capped at 0.05 s"):
        _post(fake_openai, retry=policy)
    assert time.monotonic() - t0 < 5


def test_more_posts_than_connections_wait_for_an_idle_one_and_reuse_it(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.latency = 0.01

    async def go() -> list[int]:
        async with Client(fake_openai.url, concurrency=3, retry=FAST) as c:
            bodies = [
                {"model": "m", "messages": [{"role": "user", "content": f"judge item-{i:05d}"}]}
                for i in range(40)
            ]
            replies = await asyncio.gather(*(c.post("/chat/completions", b) for b in bodies))
            return [r.status_code for r in replies]

    assert asyncio.run(go()) == [200] * 40
    assert len(fake_openai.log) == 40
    assert 1 <= len(fake_openai.connections) <= 3  # kept alive, never reopened per request


def test_an_azure_deployment_gets_the_key_in_an_api_key_header(fake_openai: FakeOpenAI) -> None:
    # Azure OpenAI's deployment endpoints take an API key in the api-key header; a bearer
    # token there must be an Entra ID token, so "Bearer <key>" is a 401
    key = "0123456789abcdef0123456789abcdef"
    fake_openai.require_key = key
    url = fake_openai.azure_url("gpt-4o-mini")
    reply, _ = _post(fake_openai, key=key, base_url=url)
    assert reply.status_code == 200
    seen = fake_openai.headers_seen[-1]
    assert seen["api-key"] == key and "Authorization" not in seen
    sent = "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21"
    assert fake_openai.log[-1].path == sent


@pytest.mark.parametrize(
    ("base_url", "header"),
    [
        ("https://my-res.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "api-key"),
        ("https://my-res.openai.azure.com/openai/v1", "api-key"),
        ("https://my-res.cognitiveservices.azure.com/openai/v1/", "api-key"),
        ("https://gw.example.com/openai/deployments/d?api-version=2024-10-21", "api-key"),
        ("https://api.openai.com/v1", "Authorization"),
        ("http://localhost:8000/v1", "Authorization"),
        ("https://openai.azure.com.example.net/v1", "Authorization"),
    ],
)
def test_the_key_header_follows_the_server(base_url: str, header: str) -> None:
    headers = key_headers(base_url, "k")
    assert list(headers) == [header]
    assert headers[header] == ("k" if header == "api-key" else "Bearer k")


def test_a_429_for_no_quota_stops_the_run_instead_of_being_retried(
    fake_openai: FakeOpenAI,
) -> None:
    # OpenAI answers 429 insufficient_quota when the account has no credit left: no wait
    # changes it, and every request of the run would be retried in vain
    fake_openai.faults["item-00007"] = ["quota", "quota", "quota"]
    with pytest.raises(AuthenticationFailed, match="HTTP 429: You exceeded your current quota"):
        _post(fake_openai)
    assert fake_openai.requested("item-00007") == 1


def test_x_should_retry_false_is_obeyed(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["no_retry"]
    with pytest.raises(RequestRejected, match="HTTP 503: overloaded; do not retry"):
        _post(fake_openai)
    assert fake_openai.requested("item-00007") == 1


def test_x_should_retry_true_is_obeyed(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["retry_400"]
    reply, retries = _post(fake_openai)
    assert reply.status_code == 200 and retries == 1


def test_an_html_error_page_is_quoted_by_its_title(fake_openai: FakeOpenAI) -> None:
    # a proxy's or CDN's error page starts with markup; its words are in the title
    fake_openai.faults["item-00007"] = ["html"]
    with pytest.raises(RequestFailed) as e:
        _post(fake_openai, retry=RetryPolicy(max_retries=0))
    assert "HTTP 502: api.example.com | 502: Bad gateway;" in str(e.value)
    assert "<" not in str(e.value)


def test_a_vllm_error_body_is_quoted_by_its_message(fake_openai: FakeOpenAI) -> None:
    # vLLM's OpenAI server answers errors as {"object": "error", "message": ...}
    fake_openai.faults["item-00007"] = ["vllm_400"]
    with pytest.raises(RequestRejected, match=r"HTTP 400: This model's maximum context length"):
        _post(fake_openai)


def test_a_200_that_carries_only_an_error_is_a_failed_attempt(fake_openai: FakeOpenAI) -> None:
    # OpenRouter sends its 200 before the provider runs; a provider failure then comes as
    # {"error": {"code": 429, ...}} in the body: a failed request, not the model's answer
    fake_openai.faults["item-00007"] = ["in_band_429", "in_band_429"]
    reply, retries = _post(fake_openai)
    assert retries == 2 and "choices" in reply.body
    fake_openai.faults["item-00007"] = ["in_band_400"]
    with pytest.raises(RequestRejected, match="HTTP 200 with error 400 in its body: Provider"):
        _post(fake_openai)
    assert fake_openai.requested("item-00007") == 4


def test_a_200_with_an_error_beside_its_choices_is_a_failed_attempt(
    fake_openai: FakeOpenAI,
) -> None:
    # OpenRouter's mid-generation failure: a top-level error beside an empty choice that
    # finish_reason "error" ended. The answer reader refuses a body with an error, so
    # taken as the answer it became an unparseable row (charged to the model, never
    # asked again); it is a failed attempt, retried as its code says
    fake_openai.faults["item-00007"] = ["in_band_502_choices"]
    reply, retries = _post(fake_openai)
    assert retries == 1 and "error" not in reply.body and reply.body["choices"]
    fake_openai.faults["item-00007"] = ["in_band_502_choices"] * 3
    with pytest.raises(RequestFailed, match="HTTP 200 with error 502 in its body: Provider"):
        _post(fake_openai, retry=RetryPolicy(max_retries=2, base_delay=0.001))
    assert fake_openai.requested("item-00007") == 5


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        # finish_reason "error" with no content (the error in the choice, no top-level
        # one): the server failed, the model said nothing
        ("choice_error", "error 502 in its body: Upstream error from Mistral"),
        # "choices": [] is not something the model said either
        ("no_choices", "HTTP 200 with an error in its body: the answer holds no choices"),
    ],
)
def test_a_200_the_model_said_nothing_in_is_a_failed_attempt(
    fake_openai: FakeOpenAI, fault: str, said: str
) -> None:
    # read as an answer, such a body was an unparseable row charged to the model and
    # never asked again; it is retried
    fake_openai.faults["item-00007"] = [fault]
    reply, retries = _post(fake_openai)
    assert retries == 1 and reply.body["choices"][0]["finish_reason"] == "stop"
    fake_openai.faults["item-00007"] = [fault] * 2
    with pytest.raises(RequestFailed, match=said):
        _post(fake_openai, retry=RetryPolicy(max_retries=1, base_delay=0.001))
    assert fake_openai.requested("item-00007") == 4


def test_a_parameter_the_model_does_not_take_stops_the_run(fake_openai: FakeOpenAI) -> None:
    # OpenAI refuses max_tokens (or a temperature, logprobs) for its reasoning models with
    # 400 unsupported_parameter / unsupported_value: every request of the run would fail
    fake_openai.faults["item-00007"] = ["unsupported"]
    with pytest.raises(AuthenticationFailed, match="Unsupported parameter: 'max_tokens'") as e:
        _post(fake_openai)
    assert "max_tokens" in str(e.value) and fake_openai.requested("item-00007") == 1


@pytest.mark.parametrize("code", [[], {"a": 1}, 429.5, None, True])
def test_an_error_code_of_any_json_type_is_read_without_failing(code: Any) -> None:
    from toxeval.llm.error_bodies import fails_alike, in_band_error

    body = {"error": {"message": "m", "code": code, "type": [code]}}
    assert fails_alike(429, json.dumps(body).encode()) is None
    assert fails_alike(400, json.dumps(body).encode()) is None
    assert in_band_error(body) == 0


@pytest.mark.parametrize(
    ("page", "said"),
    [
        ("<html><head><TITLE lang=en>502 &amp; gone</TITLE></head></html>", "502 & gone"),
        ("<!doctype html><p>Bad <b>gateway</b></p><!-- a <p>note</p> -->", "Bad gateway"),
        ("<html><style>p {x: 1}</style><script>if (a < b) go()</SCRIPT >Down</html>", "Down"),
        ("<html><p>Upstream reset<!-- cut here", "Upstream reset"),
        ("<html><p>Upstream reset<script>var a = '", "Upstream reset"),
        ("<html><title>no end<p>Gone</p>", "no end Gone"),
        ("<html>" + "<title>" * 9000, ""),
        ("<html>" + "<!--" * 16000, ""),
        ("<html>" + "<" * 64000, ""),
    ],
)
def test_an_html_error_page_is_read_in_one_pass(page: str, said: str) -> None:
    # the title, else the words outside tags, comments, scripts and styles; a page of
    # unclosed tags or comments (a hostile or cut page) is read in one forward pass
    from toxeval.llm.error_bodies import error_detail

    assert error_detail(page.encode()) == said


@pytest.mark.parametrize(
    "said",
    [
        "bad key\x1b[2K\x1b[1A\rtoxeval: done, 100 rows",  # ANSI: erase the line, move up
        "a\x00b\x07c\x9bd",  # NUL, BEL, a C1 CSI
        "key \u202eyek\u202c \u200b\ufeffok",  # a bidi override, a zero-width space, a BOM
    ],
)
def test_a_servers_words_reach_the_terminal_without_control_characters(said: str) -> None:
    # error lines are printed to stderr: a hostile server's escape sequences must not
    # rewrite what the user reads; they are shown as escapes instead
    from toxeval.llm.error_bodies import error_detail, in_band_detail

    for content in (json.dumps({"error": {"message": said}}), said):
        shown = error_detail(content.encode())
        assert shown.isprintable()
        assert any(escape in shown for escape in ("\\x1b", "\\x00", "\\u202e"))
    body = {"error": {"message": said, "code": 500}}
    assert in_band_detail(body, json.dumps(body).encode()).isprintable()
