"""toxeval.llm.network (the native asyncio backend under the runner's client) and
toxeval.llm.connections: httpcore's exceptions on timeouts and failures, partial reads,
a server closing the connection, TLS against a 127.0.0.1 server with a certificate made
here, connection reuse, bodies that do not decode, and the httpx path for proxies."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpcore
import pytest
from fake_openai import FakeOpenAI
from toxeval.llm.client import Client, RequestFailed, RetryPolicy
from toxeval.llm.connections import (
    DirectConnections,
    HttpxConnections,
    decode_body,
    open_connections,
)
from toxeval.llm.network import NativeBackend

FAST = RetryPolicy(max_retries=4, base_delay=0.001, max_delay=0.01)
BODY = {"model": "m", "messages": [{"role": "user", "content": "judge item-00007"}]}
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _serve(handler: Handler, test: Callable[[int], Awaitable[Any]], tls: Any = None) -> Any:
    """Run ``test(port)`` against an asyncio server on 127.0.0.1 that runs ``handler``
    for each connection."""

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
        port = server.sockets[0].getsockname()[1]
        try:
            return await test(port)
        finally:
            server.close()

    return asyncio.run(go())


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(5)  # reads nothing, sends nothing
    writer.close()


def test_a_read_past_its_timeout_raises_httpcore_read_timeout() -> None:
    async def test(port: int) -> None:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore.ReadTimeout):
            await stream.read(1024, timeout=0.05)
        await stream.aclose()

    _serve(_silent, test)


def test_a_write_the_peer_does_not_read_raises_httpcore_write_timeout() -> None:
    async def test(port: int) -> None:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore.WriteTimeout):
            await stream.write(b"x" * (32 * 1024 * 1024), timeout=0.2)
        await stream.aclose()

    _serve(_silent, test)


def test_refused_and_timed_out_connects_raise_httpcore_connect_errors() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused

    async def refused() -> None:
        await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)

    with pytest.raises(httpcore.ConnectError):
        asyncio.run(refused())

    async def test(port: int) -> None:
        with pytest.raises(httpcore.ConnectTimeout):
            await NativeBackend().connect_tcp("127.0.0.1", port, timeout=0)

    _serve(_silent, test)


def test_partial_reads_keep_order_and_end_with_an_empty_read() -> None:
    async def dribble(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"abc")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"defgh")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()

    async def test(port: int) -> list[bytes]:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        got = [await stream.read(2, timeout=5)]
        while got[-1]:
            got.append(await stream.read(100, timeout=5))
        assert stream.get_extra_info("is_readable")  # closed by the server
        await stream.aclose()
        return got

    got = _serve(dribble, test)
    assert got[0] == b"ab" and got[-1] == b"" and b"".join(got) == b"abcdefgh"
    assert all(len(g) <= 100 for g in got)


def test_a_reset_connection_is_a_read_error_and_readable_when_idle() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # RST instead of FIN

    async def test(port: int) -> None:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        assert not stream.get_extra_info("is_readable")  # open and idle
        assert stream.get_extra_info("server_addr")[1] == port
        await stream.write(b"x", timeout=5)
        with pytest.raises(httpcore.ReadError):
            while await stream.read(100, timeout=5):
                pass
        await stream.aclose()
        with pytest.raises(httpcore.ReadError):
            await stream.read(100, timeout=5)  # closed here
        with pytest.raises(httpcore.WriteError):
            await stream.write(b"y", timeout=5)

    _serve(reset, test)


def test_a_request_head_and_body_go_out_as_one_write() -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"ok")
        await writer.drain()
        writer.close()

    async def test(port: int) -> list[bytes]:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        sent: list[bytes] = []
        transport = stream._transport  # type: ignore[attr-defined]
        real = transport.write
        transport.write = lambda data: (sent.append(bytes(data)), real(data))
        await stream.write(b"head;", timeout=5)
        await stream.write(b"body", timeout=5)
        assert await stream.read(100, timeout=5) == b"ok"
        await stream.aclose()
        return sent

    assert _serve(echo, test) == [b"head;body"]


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


def test_start_tls_talks_to_a_server_with_a_trusted_certificate(tmp_path: Path) -> None:
    pem = _certificate(tmp_path)

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read(100)
        writer.write(data.upper())
        await writer.drain()
        writer.close()

    async def test(port: int) -> tuple[bytes, bytes]:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        ctx = ssl.create_default_context(cafile=str(pem))
        tls = await stream.start_tls(ctx, server_hostname="127.0.0.1", timeout=5)
        assert tls.get_extra_info("ssl_object") is not None
        await tls.write(b"hello", timeout=5)
        got = await tls.read(100, timeout=5)
        rest = await tls.read(100, timeout=5)
        await tls.aclose()
        return got, rest

    assert _serve(echo, test, tls=_server_context(pem)) == (b"HELLO", b"")


def test_start_tls_with_an_untrusted_certificate_is_a_connect_error(tmp_path: Path) -> None:
    pem = _certificate(tmp_path)

    async def test(port: int) -> None:
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        ctx = ssl.create_default_context()  # the system's CAs: ours is not among them
        with pytest.raises(httpcore.ConnectError):
            await stream.start_tls(ctx, server_hostname="127.0.0.1", timeout=5)

    _serve(_silent, test, tls=_server_context(pem))


def test_the_client_posts_over_https_and_keeps_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pem = _certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))  # how a user trusts a private CA
    server = FakeOpenAI().start(tls=_server_context(pem))
    try:
        assert server.url.startswith("https://")
        server.faults["item-00007"] = ["reset"]

        async def go() -> list[int]:
            async with Client(server.url, concurrency=1, retry=FAST) as c:
                return [(await c.post("/chat/completions", BODY)).attempts for _ in range(5)]

        assert asyncio.run(go()) == [2, 1, 1, 1, 1]  # the reset one retried on a new one
        assert len(server.connections) == 2
    finally:
        server.stop()


# ---------------------------------------------------------------- the client over it


def _posts(server: FakeOpenAI, n: int, *, pause: float = 0.0, **kw: Any) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(server.url, retry=kw.pop("retry", FAST), **kw) as c:
            replies = []
            for _ in range(n):
                replies.append(await c.post("/chat/completions", BODY))
                await asyncio.sleep(pause)
            return replies

    return asyncio.run(go())


def test_one_slot_sends_every_request_on_one_connection(fake_openai: FakeOpenAI) -> None:
    replies = _posts(fake_openai, 50, concurrency=1)
    assert [r.attempts for r in replies] == [1] * 50
    assert len(fake_openai.connections) == 1
    port = fake_openai.url.split(":")[2].split("/")[0]
    assert {h["Host"] for h in fake_openai.headers_seen} == {f"127.0.0.1:{port}"}


def test_a_connection_the_server_closed_while_idle_is_replaced_without_a_retry(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["close_after", "close_after"]
    replies = _posts(fake_openai, 4, pause=0.05, concurrency=1)
    assert [r.attempts for r in replies] == [1, 1, 1, 1]
    assert len(fake_openai.connections) == 3


def test_an_answer_that_arrives_a_few_bytes_at_a_time_is_read_whole(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["dribble"]
    (reply,) = _posts(fake_openai, 1)
    assert reply.attempts == 1 and reply.body["choices"]


def test_a_corrupt_gzip_body_is_retried_then_a_failure_not_a_crash(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.faults["item-00007"] = ["bad_gzip"]
    (reply,) = _posts(fake_openai, 1)
    assert reply.attempts == 2 and reply.body["choices"]
    fake_openai.faults["item-00007"] = ["bad_gzip"] * 10
    with pytest.raises(RequestFailed, match="does not decode") as e:
        _posts(fake_openai, 1)
    assert e.value.status_code == 200


def test_gzip_and_deflate_bodies_decode_as_httpx_decodes_them() -> None:
    import gzip
    import zlib

    data = b'{"a": 1}' * 100
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode_body(gzip.compress(data), "gzip") == data
    assert decode_body(zlib.compress(data), "deflate") == data
    assert decode_body(raw.compress(data) + raw.flush(), "deflate") == data
    assert decode_body(zlib.compress(gzip.compress(data)), "gzip, deflate") == data
    assert decode_body(data, "identity") == data


def test_a_proxy_variable_sends_through_httpx_which_reads_no_proxy(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    args = dict(slots=1, connect_timeout=5.0, read_timeout=5.0, deadline=60.0)
    assert isinstance(open_connections(fake_openai.url, {}, **args), DirectConnections)
    with_user = fake_openai.url.replace("://", "://user:secret@")
    assert isinstance(open_connections(with_user, {}, **args), HttpxConnections)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    assert isinstance(open_connections(fake_openai.url, {}, **args), HttpxConnections)
    with pytest.raises(RequestFailed, match="connection error"):
        _posts(fake_openai, 1, retry=RetryPolicy(max_retries=0))
    assert fake_openai.log == []  # the request went to the proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    fake_openai.faults["item-00007"] = ["bad_gzip"]
    (reply,) = _posts(fake_openai, 1)
    assert reply.attempts == 2 and len(fake_openai.log) == 2


@pytest.mark.parametrize("through", ["direct", "httpx"])
def test_an_error_answer_whose_body_does_not_decode_keeps_its_status(
    fake_openai: FakeOpenAI, through: str
) -> None:
    # a 401 or 429 with a corrupt gzip body was a "malformed answer": the 401 did not
    # stop the run and the 429's Retry-After was not a rate limit (3 bodies gave up)
    from toxeval.llm.client import AuthenticationFailed

    url = fake_openai.url
    if through == "httpx":  # URL credentials send through httpx's client
        url = url.replace("://", "://user:secret@")

    async def post() -> Any:
        async with Client(url, retry=FAST) as c:
            return await c.post("/chat/completions", BODY)

    fake_openai.faults["item-00007"] = ["bad_gzip_429"] * 3
    reply = asyncio.run(post())
    assert reply.attempts == 4 and reply.body["choices"]
    fake_openai.faults["item-00007"] = ["bad_gzip_401"]
    with pytest.raises(AuthenticationFailed, match="HTTP 401") as e:
        asyncio.run(post())
    assert e.value.status_code == 401 and e.value.attempts == 1
