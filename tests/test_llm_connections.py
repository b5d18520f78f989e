"""toxeval.llm.connections, the runner's transport on aiohttp, against servers on
127.0.0.1: the fake OpenAI server (tests/fake_openai.py) and raw servers sending exact
bytes (tests/raw_http.py). What a user relies on: answers read whole however they are
framed or split, connections kept alive and replaced when the server closes them, a cut,
malformed or endless answer a failed attempt (retried), never a body that could be
scored; gzip and deflate decoded under the body cap; TLS to a server whose certificate
is trusted through ``SSL_CERT_FILE``; the system's proxy settings."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import ssl
import zlib
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, write_dataset
from raw_http import ANSWER, BODY, answering, chunked, ok_answer, read_request, serve, sized
from toxeval.cli import main as cli_main
from toxeval.llm import connections
from toxeval.llm.client import AuthenticationFailed, Client, RequestFailed, RetryPolicy

FAST = RetryPolicy(max_retries=4, base_delay=0.001, max_delay=0.01)
CHAT = {"model": "m", "messages": [{"role": "user", "content": "judge item-00007"}]}
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def _posts(url: str, n: int, *, pause: float = 0.0, **kw: Any) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(url, retry=kw.pop("retry", FAST), **kw) as c:
            replies = []
            for _ in range(n):
                replies.append(await c.post("/chat/completions", CHAT))
                await asyncio.sleep(pause)
            return replies

    return asyncio.run(asyncio.wait_for(go(), 30))


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable set (the tests' own environment may have some)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


# ---------------------------------------------------------------- keep-alive


def test_one_slot_sends_every_request_on_one_connection(fake_openai: FakeOpenAI) -> None:
    replies = _posts(fake_openai.url, 50, concurrency=1)
    assert [r.attempts for r in replies] == [1] * 50
    assert len(fake_openai.connections) == 1
    port = fake_openai.url.split(":")[2].split("/")[0]
    assert {h["Host"] for h in fake_openai.headers_seen} == {f"127.0.0.1:{port}"}


def test_a_connection_the_server_closed_while_idle_is_replaced_without_a_retry(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["close_after", "close_after"]
    replies = _posts(fake_openai.url, 4, pause=0.05, concurrency=1)
    assert [r.attempts for r in replies] == [1, 1, 1, 1]
    assert len(fake_openai.connections) == 3


def test_chunked_gzip_answers_are_read_and_a_closing_connection_is_replaced() -> None:
    packed = gzip.compress(BODY)
    gzipped = ok_answer(
        b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(packed), packed),
    )
    replies, made = serve([gzipped, sized(extra=b"Connection: close\r\n")], [sized()], requests=3)
    assert replies == [ANSWER] * 3
    assert made == 2  # the first served two requests, then said close


# ---------------------------------------------------------------- framing


@pytest.mark.parametrize(
    "answer",
    [
        sized(),
        chunked(BODY[:10], BODY[10:], trailer=b"X-T: 1\r\n"),
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + sized(),
        b"HTTP/1.1 200\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),  # no reason
        sized().replace(b"\r\n", b"\n", 2),  # bare LF line ends (RFC 9112 2.2)
        b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
    ],
    ids=["sized", "chunked", "interim", "no-reason", "bare-lf", "http-1.0"],
)
def test_an_answer_is_read_whole_however_it_is_framed(answer: bytes) -> None:
    replies, _ = serve([answer], requests=1)
    assert replies == [ANSWER]


def test_an_answer_without_length_runs_until_the_server_closes() -> None:
    replies, made = serve(answering(ok_answer(b"", BODY)), [sized()], requests=2)
    assert replies == [ANSWER, ANSWER] and made == 2  # not kept: it had no framing


def test_an_answer_trickled_byte_by_byte_is_read_whole() -> None:
    answer = chunked(BODY[:7], BODY[7:], trailer=b"X-T: 1\r\n")

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        for i in range(len(answer)):
            writer.write(answer[i : i + 1])
            await writer.drain()
            await asyncio.sleep(0.001)
        await asyncio.sleep(5)

    assert serve(handler, requests=1)[0] == [ANSWER]


def test_an_answer_that_arrives_a_few_bytes_at_a_time_is_read_whole(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["dribble"]
    (reply,) = _posts(fake_openai.url, 1)
    assert reply.attempts == 1 and reply.body["choices"]


@pytest.mark.parametrize(
    "answer",
    [
        b"",
        b"HTTP/1.1 200 OK\r\nContent-Le",
        sized()[:-5],
        chunked(BODY)[:-12],
        ok_answer(b"Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"),
        ok_answer(b"Transfer-Encoding: chunked\r\n", b"2\r\n{}}\r\n0\r\n\r\n"),
        sized(extra=b"Content-Length: 3\r\n"),
        ok_answer(b"Content-Length: +5\r\n", b"{}"),
        ok_answer(b"No colon here\r\nContent-Length: 2\r\n", b"{}"),
        b"ICY 200 OK\r\n\r\n",
        b"HTTP/1.1 2OO OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: " + b"a" * (1 << 17) + b"\r\n\r\n",
    ],
    ids=[
        "nothing",
        "cut-head",
        "cut-body",
        "cut-chunks",
        "bad-chunk-size",
        "chunk-longer-than-its-size",
        "conflicting-lengths",
        "signed-length",
        "no-colon",
        "not-http",
        "bad-status",
        "huge-head",
    ],
)
def test_a_malformed_or_cut_answer_is_a_connection_error_then_retried_fresh(
    answer: bytes,
) -> None:
    replies, made = serve(answering(answer), [sized()], requests=2)  # then closes
    failed, good = replies
    assert isinstance(failed, RequestFailed) and "connection error" in str(failed), failed
    assert failed.status_code is None and good == ANSWER and made == 2


def test_a_second_answer_to_one_request_is_never_given_to_the_next() -> None:
    one, two = b'{"n": 1}', b'{"n": 2}'
    replies, made = serve([sized(one) + sized(two)], [sized(two)], requests=2)
    assert replies == [{"n": 1}, {"n": 2}] and made == 2


def test_a_late_unasked_answer_is_never_given_to_the_next_request() -> None:
    one, two = b'{"n": 1}', b'{"n": 2}'

    async def late(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(sized(one))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(sized(b'{"stray": 1}'))  # unasked, after the answer
        await writer.drain()
        await asyncio.sleep(5)

    async def go() -> Any:
        server_made: list[int] = []

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            server_made.append(1)
            run = late if len(server_made) == 1 else answering(sized(two), close=False)
            await run(reader, writer)

        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with Client(url, concurrency=1, retry=RetryPolicy(max_retries=1)) as c:
                first = (await c.post("/x", {})).body
                await asyncio.sleep(0.3)
                return first, (await c.post("/x", {})).body
        finally:
            server.close()

    assert asyncio.run(asyncio.wait_for(go(), 30)) == ({"n": 1}, {"n": 2})


def test_a_trickled_endless_body_is_cut_by_the_deadline_and_retried_fresh() -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n\r\n{")  # read until close, never closed
        try:
            for _ in range(200):
                await asyncio.sleep(0.02)
                writer.write(b" ")
                await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    replies, made = serve(trickle, [sized()], requests=1, retries=1, request_deadline=0.3)
    assert replies == [ANSWER] and made == 2


def test_infinite_timeouts_mean_no_limit() -> None:
    # --request-deadline inf (documented: no deadline) and --timeout inf were an internal
    # OverflowError: aiohttp rounds its timers up to an integer
    inf = float("inf")
    replies, made = serve(
        [sized()], requests=1, request_deadline=inf, read_timeout=inf, connect_timeout=inf
    )
    assert replies == [ANSWER] and made == 1


def test_a_server_that_stalls_after_a_100_continue_is_cut_by_the_read_timeout() -> None:
    # aiohttp drops its read timeout at a 1xx (whose empty body it takes for the end of
    # the answer); the final answer is still awaited and must not wait for the deadline
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(20)
        writer.close()

    replies, made = serve(stall, requests=1, read_timeout=0.2, request_deadline=15)
    assert made == 1
    (failed,) = replies
    assert isinstance(failed, RequestFailed)
    assert "SocketTimeoutError" in str(failed) and "deadline" not in str(failed)


# ---------------------------------------------------------------- bodies


@pytest.mark.parametrize(
    "answer",
    [
        sized(b"x" * 100),
        chunked(b"x" * 40, b"x" * 40),
        ok_answer(b"", b"x" * 100),
        ok_answer(b"Content-Encoding: gzip\r\n", gzip.compress(b" " * 100)),
    ],
    ids=["declared", "chunked", "until-close", "gzip"],
)
def test_a_body_over_the_cap_is_a_failure_not_read_on(
    answer: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "MAX_BODY_BYTES", 50)
    (failed,), _ = serve([answer], requests=1)
    assert isinstance(failed, RequestFailed) and "too large" in str(failed), failed


def test_a_gzip_bomb_is_not_read_past_the_body_cap(fake_openai: FakeOpenAI) -> None:
    fake_openai.faults["item-00007"] = ["gzip_bomb"]
    with pytest.raises(RequestFailed, match="too large"):
        _posts(fake_openai.url, 1)


def test_gzip_and_deflate_bodies_are_decoded() -> None:
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    bodies = [
        (b"gzip", gzip.compress(BODY)),
        (b"deflate", zlib.compress(BODY)),  # zlib-wrapped, as the RFC says
        (b"deflate", raw.compress(BODY) + raw.flush()),  # raw deflate, as some servers send
        (b"identity", BODY),
    ]
    answers = [sized(b, b"Content-Encoding: %s\r\n" % e) for e, b in bodies]
    replies, made = serve(answers, requests=len(answers))
    assert replies == [ANSWER] * len(answers) and made == 1


def test_an_empty_error_body_with_a_content_encoding_keeps_its_retry_after() -> None:
    limited = b"HTTP/1.1 429 Too Many\r\nContent-Encoding: gzip\r\nRetry-After: 0\r\n"
    replies, _ = serve([limited + b"Content-Length: 0\r\n\r\n", sized()], requests=1, retries=1)
    assert replies == [ANSWER]


def test_a_corrupt_gzip_body_is_retried_then_a_failure_not_a_crash(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["bad_gzip"]
    (reply,) = _posts(fake_openai.url, 1)
    assert reply.attempts == 2 and reply.body["choices"]
    fake_openai.faults["item-00007"] = ["bad_gzip"] * 10
    with pytest.raises(RequestFailed, match="does not decode") as e:
        _posts(fake_openai.url, 1)
    assert e.value.status_code == 200


def test_an_error_answer_whose_body_does_not_decode_keeps_its_status(
    fake_openai: FakeOpenAI,
) -> None:
    # a 401 or 429 with a corrupt gzip body is still that error: the 401 stops the run,
    # the 429's Retry-After is a rate limit (not a malformed answer retried 3 times)
    fake_openai.faults["item-00007"] = ["bad_gzip_429"] * 3
    (reply,) = _posts(fake_openai.url, 1)
    assert reply.attempts == 4 and reply.body["choices"]
    fake_openai.faults["item-00007"] = ["bad_gzip_401"]
    with pytest.raises(AuthenticationFailed, match="HTTP 401") as e:
        _posts(fake_openai.url, 1)
    assert e.value.status_code == 401 and e.value.attempts == 1


def test_no_cookie_is_kept_and_no_redirect_followed() -> None:
    cookie = sized(extra=b"Set-Cookie: session=abc; Path=/\r\n")
    heads: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in (cookie, sized()):
            heads.append(await read_request(reader))
            writer.write(answer)
            await writer.drain()
        await asyncio.sleep(5)

    replies, _ = serve(handler, requests=2)
    assert replies == [ANSWER, ANSWER] and b"cookie" not in heads[1].lower()


# ---------------------------------------------------------------- TLS


def _certificate(tmp_path: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 and its key, in one PEM file."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "cert.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pem


def _server_context(pem: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pem)
    return ctx


def test_the_client_posts_over_https_and_keeps_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pem = _certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))  # how a user trusts a private CA
    server = FakeOpenAI().start(tls=_server_context(pem))
    try:
        assert server.url.startswith("https://")
        server.faults["item-00007"] = ["reset"]
        replies = _posts(server.url, 5, concurrency=1)
        assert [r.attempts for r in replies] == [2, 1, 1, 1, 1]  # the reset one on a new one
        assert len(server.connections) == 2
    finally:
        server.stop()


def test_a_certificate_that_is_not_trusted_is_a_connection_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    server = FakeOpenAI().start(tls=_server_context(_certificate(tmp_path)))
    try:
        with pytest.raises(RequestFailed, match=r"connection error.*certificate") as e:
            _posts(server.url, 1, retry=RetryPolicy(max_retries=0))
        assert e.value.status_code is None
        assert server.log == []  # nothing was sent
    finally:
        server.stop()


# ---------------------------------------------------------------- proxies


def _proxy(seen: list[bytes]) -> Any:
    """A handler that plays an HTTP proxy: records each request head (absolute URI,
    Proxy-Authorization) and answers it itself."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                seen.append(await read_request(reader))
                writer.write(sized())
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    return handler


def _through_proxy(url: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Post once to ``url`` with the proxy variables ``env`` ("{proxy}" is the
    recording proxy's address); (the reply or the error, the heads the proxy saw)."""
    seen: list[bytes] = []

    async def go() -> Any:
        proxy = await asyncio.start_server(_proxy(seen), "127.0.0.1", 0)
        address = f"127.0.0.1:{proxy.sockets[0].getsockname()[1]}"
        for k, v in env.items():
            monkeypatch.setenv(k, v.format(proxy=address))
        try:
            async with Client(url, concurrency=1, retry=RetryPolicy(max_retries=0)) as c:
                return await c.post("/chat/completions", CHAT)
        except RequestFailed as e:
            return e
        finally:
            proxy.close()

    return asyncio.run(asyncio.wait_for(go(), 30)), seen


def test_an_http_proxy_variable_sends_every_request_through_the_proxy(
    fake_openai: FakeOpenAI, no_proxy: pytest.MonkeyPatch
) -> None:
    env = {"HTTP_PROXY": "http://user:pw@{proxy}"}
    reply, seen = _through_proxy(fake_openai.url, env, no_proxy)
    assert reply.body == ANSWER and fake_openai.log == []  # the proxy answered
    (head,) = seen
    assert head.startswith(b"POST " + f"{fake_openai.url}/chat/completions".encode())
    assert b"Proxy-Authorization: Basic dXNlcjpwdw==" in head  # user:pw


def test_no_proxy_and_all_proxy_are_honoured(
    fake_openai: FakeOpenAI, no_proxy: pytest.MonkeyPatch
) -> None:
    env = {"ALL_PROXY": "http://{proxy}", "NO_PROXY": "127.0.0.1"}
    reply, seen = _through_proxy(fake_openai.url, env, no_proxy)
    assert reply.attempts == 1 and seen == [] and len(fake_openai.log) == 1
    no_proxy.delenv("NO_PROXY")
    reply, seen = _through_proxy(fake_openai.url, {"ALL_PROXY": "http://{proxy}"}, no_proxy)
    assert reply.body == ANSWER and len(seen) == 1 and len(fake_openai.log) == 1


def test_the_system_proxy_settings_are_read_as_urllib_reads_them(
    fake_openai: FakeOpenAI, no_proxy: pytest.MonkeyPatch
) -> None:
    # Windows and macOS keep the proxy in the system settings, which urllib's
    # getproxies() reads there; nothing in the environment
    seen: list[bytes] = []

    async def go() -> Any:
        proxy = await asyncio.start_server(_proxy(seen), "127.0.0.1", 0)
        address = f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}"
        no_proxy.setattr(connections, "getproxies", lambda: {"http": address})
        try:
            async with Client(fake_openai.url, concurrency=1) as c:
                return await c.post("/chat/completions", CHAT)
        finally:
            proxy.close()

    assert asyncio.run(asyncio.wait_for(go(), 30)).body == ANSWER
    assert len(seen) == 1 and fake_openai.log == []


@pytest.mark.parametrize("proxy", ["socks5://127.0.0.1:1080", "https://127.0.0.1:3128"])
def test_a_proxy_toxeval_cannot_use_is_a_one_line_error_not_a_direct_connection(
    proxy: str,
    fake_openai: FakeOpenAI,
    no_proxy: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    no_proxy.setenv("ALL_PROXY", proxy.replace("://", "://u:hunter2@"))
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake"]
    args += ["--base-url", fake_openai.url, "--out", str(tmp_path / "run.jsonl")]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    shown = proxy.replace("://", "://u:***@")  # the password hidden
    assert "not supported" in err and "http:// proxies only" in err and shown in err
    assert "hunter2" not in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert fake_openai.log == [] and not (tmp_path / "run.jsonl").exists()


def test_an_https_server_is_reached_through_a_connect_tunnel_with_the_proxy_credentials(
    tmp_path: Path, no_proxy: pytest.MonkeyPatch
) -> None:
    pem = _certificate(tmp_path)
    no_proxy.setenv("SSL_CERT_FILE", str(pem))
    server = FakeOpenAI().start(tls=_server_context(pem))
    opened: list[bytes] = []

    async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        opened.append(head)
        host, port = head.split()[1].decode().rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            except ConnectionError:
                pass
            w.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def go() -> Any:
        proxy = await asyncio.start_server(tunnel, "127.0.0.1", 0)
        port = proxy.sockets[0].getsockname()[1]
        no_proxy.setenv("HTTPS_PROXY", f"http://user:pw@127.0.0.1:{port}")
        try:
            async with Client(server.url, "sk-key-0123456789", concurrency=1) as c:
                return [await c.post("/chat/completions", CHAT) for _ in range(2)]
        finally:
            proxy.close()

    try:
        replies = asyncio.run(asyncio.wait_for(go(), 30))
    finally:
        server.stop()
    assert [r.attempts for r in replies] == [1, 1] and len(server.log) == 2
    (head,) = opened  # one tunnel, kept alive for both requests
    assert head.startswith(b"CONNECT 127.0.0.1:") and b"Proxy-Authorization: Basic" in head
    assert b"sk-key" not in head  # the API key goes through the tunnel only
    for seen in server.headers_seen:  # the proxy's credentials stop at the proxy
        assert "Proxy-Authorization" not in seen
        assert seen["Authorization"] == "Bearer sk-key-0123456789"


@pytest.mark.parametrize(
    ("name", "value"),
    [("SSL_CERT_FILE", "missing.pem"), ("SSL_CERT_FILE", "junk.pem"), ("SSL_CERT_DIR", "none")],
)
def test_a_ca_variable_that_gives_no_certificates_is_a_one_line_error_not_ignored(
    name: str,
    value: str,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv(name, str(tmp_path / value))
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake"]
    args += ["--base-url", fake_openai.url, "--out", str(tmp_path / "run.jsonl")]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert f"{name}={tmp_path / value} gives no CA certificates" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert fake_openai.log == []


def test_a_key_with_a_line_break_is_a_one_line_error_that_does_not_show_it(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a key pasted with its line end (or a forged header after it) would split the
    # request's head: refused before anything is sent
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake", "--api-key-env"]
    args += ["MY_KEY", "--base-url", fake_openai.url, "--out", str(tmp_path / "run.jsonl")]
    with pytest.MonkeyPatch.context() as m:
        m.setenv("MY_KEY", "sk-secret-0123\r\nX-Forged: 1")
        assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert "Authorization header cannot be sent" in err and "line break" in err
    assert "secret" not in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert fake_openai.log == [] and fake_openai.headers_seen == []
