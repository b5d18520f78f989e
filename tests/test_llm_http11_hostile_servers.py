"""Hostile and odd servers against the runner's direct HTTP path (toxeval.llm.http11 and
toxeval.llm.connections), each a raw asyncio server on 127.0.0.1 sending exact bytes:
an answer is read as the server framed it or refused as a protocol error (which the
client retries), never misread into a body that could be scored, and a server that
keeps talking without ever finishing an answer is cut off by a size cap, not only by the
request deadline."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import httpcore
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raw_http import BODY, TooLarge, answering, chunked, exchange_once, ok_answer, sized
from toxeval.llm.client import Client, RequestFailed, RetryPolicy
from toxeval.llm.connections import decode_body
from toxeval.llm.http11 import MAX_HEAD_BYTES, MAX_INTERIM, exchange


def test_a_status_line_without_reason_is_read() -> None:
    (r,) = exchange_once(answering(b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n{}"))
    assert (r.status, r.reason, r.body, r.keep_alive) == (200, b"", b"{}", True)


def test_header_names_in_any_case_and_repeated_equal_lengths_are_read() -> None:
    answer = ok_answer(
        b"CONTENT-LENGTH: 2\r\ncontent-length:2 \r\nTRANSFER-encoding: Chunked\r\n", b""
    )
    (r,) = exchange_once(answering(answer + b"2\r\n{}\r\n0\r\n\r\n"))
    # chunked wins over Content-Length (RFC 9112 6.3), and a server sending both is not
    # trusted with the connection
    assert (r.body, r.keep_alive) == (b"{}", False)


@pytest.mark.parametrize(
    "coding",
    [b"gzip, chunked", b"chunked, chunked", b"gzip", b"br", b"identity, chunked"],
)
def test_a_transfer_coding_other_than_chunked_is_refused_not_passed_on(coding: bytes) -> None:
    """A body under a transfer coding the reader does not undo would be handed on still
    coded (and read as the answer if it happened to parse): h11 refuses these too."""
    body = gzip.compress(BODY) if coding.startswith(b"gzip") else BODY
    if coding.endswith(b"chunked"):
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    e = exchange_once(answering(ok_answer(b"Transfer-Encoding: " + coding + b"\r\n", body)))
    assert isinstance(e, httpcore.RemoteProtocolError), e
    assert "Transfer-Encoding" in str(e)


def test_a_flood_of_interim_answers_is_cut_off() -> None:
    flood = b"HTTP/1.1 100 Continue\r\n\r\n" * (MAX_INTERIM + 1)
    e = exchange_once(answering(flood + sized(), close=False))
    assert isinstance(e, httpcore.RemoteProtocolError), e
    assert "interim" in str(e)
    early = b"HTTP/1.1 102 Processing\r\n\r\n" * MAX_INTERIM
    (r,) = exchange_once(answering(early + sized()))
    assert r.body == BODY


def test_endless_trailers_are_cut_off() -> None:
    trailer = b"X-T: " + b"a" * 1000 + b"\r\n"
    answer = chunked(BODY, trailer=trailer * (MAX_HEAD_BYTES // len(trailer) + 2))
    e = exchange_once(answering(answer, close=False))
    assert isinstance(e, httpcore.RemoteProtocolError), e
    assert "trailers" in str(e)


def test_a_head_with_bare_lf_line_ends_is_read() -> None:
    """RFC 9112 2.2: a recipient may take a lone LF as a line end (h11 does): such a
    head must not leave the reader waiting for a CRLF that never comes."""
    answer = b"HTTP/1.1 200 OK\nContent-Length: 2\nX-A: 1\r\n\n{}"
    (r,) = exchange_once(answering(answer, close=False))
    assert (r.status, r.body, r.headers["x-a"]) == (200, b"{}", "1")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"HTTP/1.1 2OO OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 20 OK\r\n\r\n", "status line"),
        (b"HTTP/2 200 OK\r\n\r\n", "status line"),
        (ok_answer(b"Content-Length: 2\r\nContent-Length: 20\r\n", b"{}"), "conflicting"),
        (ok_answer(b"Content-Length : 2\r\n", b"{}"), "malformed header"),
        (ok_answer(b"Transfer-Encoding: chunked\r\n", b"1;" + b"x" * 2000), "longer than 1024"),
        (ok_answer(b"Transfer-Encoding: chunked\r\n", b"ffffffffffffffffff\r\n"), "bad chunk size"),
    ],
)
def test_more_malformed_answers_are_protocol_errors(answer: bytes, message: str) -> None:
    e = exchange_once(answering(answer))
    assert isinstance(e, httpcore.RemoteProtocolError), e
    assert message in str(e)


def test_a_huge_chunk_size_is_refused_before_it_is_read() -> None:
    e = exchange_once(answering(ok_answer(b"Transfer-Encoding: chunked\r\n", b"fffffffff\r\n")))
    assert type(e).__name__ == "TooLarge"


def test_an_empty_body_with_a_content_encoding_is_empty() -> None:
    """An error answer with no body but a ``Content-Encoding`` (proxies send these) is
    still that error (a 429's Retry-After is honoured), not an undecodable body."""
    assert decode_body(b"", "gzip") == b""
    assert decode_body(b"", "deflate") == b""


def _serve(*answers: list[bytes], requests: int, retries: int = 0, **kw: Any) -> Any:
    """A client on a server whose n-th connection gives ``answers[n]``; the replies (or
    the exception) of ``requests`` posts, and the number of connections made."""
    pending = list(answers)
    made = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        made.append(writer)
        await answering(*(pending.pop(0) if pending else []), close=False)(reader, writer)

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        out: list[Any] = []
        try:
            policy = RetryPolicy(max_retries=retries, base_delay=0.001)
            async with Client(url, concurrency=1, retry=policy, **kw) as c:
                for i in range(requests):
                    try:
                        out.append((await c.post("/x", {"i": i})).body)
                    except RequestFailed as e:
                        out.append(e)
            return out
        finally:
            server.close()

    return asyncio.run(asyncio.wait_for(go(), 30)), len(made)


def test_a_second_answer_to_one_request_is_never_given_to_the_next() -> None:
    one, two = b'{"n": 1}', b'{"n": 2}'
    replies, made = _serve([sized(one) + sized(two)], [sized(two)], requests=2)
    assert replies == [{"n": 1}, {"n": 2}] and made == 2


def test_a_late_second_answer_is_noticed_before_the_connection_is_reused() -> None:
    one, two = b'{"n": 1}', b'{"n": 2}'
    stray = b'{"stray": 1}'

    async def late(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(int(head.lower().split(b"content-length: ")[1].split(b"\r")[0]))
        writer.write(sized(one))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(sized(stray))  # unasked, after the answer
        await writer.drain()
        await asyncio.sleep(5)

    conns: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(1)
        if len(conns) == 1:
            await late(reader, writer)
        else:
            await answering(sized(two), close=False)(reader, writer)

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with Client(url, concurrency=1, retry=RetryPolicy(max_retries=0)) as c:
                first = (await c.post("/x", {})).body
                await asyncio.sleep(0.3)
                return first, (await c.post("/x", {})).body
        finally:
            server.close()

    assert asyncio.run(asyncio.wait_for(go(), 30)) == ({"n": 1}, {"n": 2})
    assert len(conns) == 2


def test_a_trickled_endless_body_is_cut_by_the_deadline_and_retried_fresh() -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\n\r\n{")  # read until close, never closed
        try:
            for _ in range(200):
                await asyncio.sleep(0.02)
                writer.write(b" ")
                await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    conns: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(1)
        if len(conns) == 1:
            await trickle(reader, writer)
        else:
            await answering(sized(), close=False)(reader, writer)

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            policy = RetryPolicy(max_retries=1, base_delay=0.001)
            async with Client(url, concurrency=1, retry=policy, request_deadline=0.3) as c:
                return await c.post("/x", {})
        finally:
            server.close()

    reply = asyncio.run(asyncio.wait_for(go(), 30))
    assert reply.attempts == 2 and reply.body == {"choices": [{"message": {"content": "{}"}}]}
    assert len(conns) == 2


_HEAD = b"HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: %d\r\n\r\n" % len(BODY)


@pytest.mark.parametrize(
    "answer",
    [
        _HEAD + BODY,
        _HEAD.replace(b"\r\n", b"\n") + BODY,
        chunked(BODY[:7], BODY[7:], trailer=b"X-T: 1\r\n").replace(
            b"Transfer", b"X-A: 1\r\nTransfer"
        ),
    ],
)
def test_an_answer_trickled_byte_by_byte_is_read_whole(answer: bytes) -> None:
    """Every split of a line end, a blank line or a chunk across reads is found."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        for i in range(len(answer)):
            writer.write(answer[i : i + 1])
            await writer.drain()
            await asyncio.sleep(0.001)
        await asyncio.sleep(5)

    (r,) = exchange_once(handler)
    assert (r.status, r.headers["x-a"], r.body, r.keep_alive) == (200, "1", BODY, True)


class _Segments:
    """A stream that returns ``data`` in the given segment sizes (then end of stream)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.at = data, sizes, 0

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        pass

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        n = self.sizes.pop(0) if self.sizes else len(self.data)
        piece = self.data[self.at : self.at + max(1, min(n, max_bytes))]
        self.at += len(piece)
        return piece


def _h11_reads(answer: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers, body) of ``answer`` as h11 reads it (httpcore's reader)."""
    import h11

    conn = h11.Connection(h11.CLIENT)
    conn.send(
        h11.Request(method="POST", target="/", headers=[("Host", "h"), ("Content-Length", "0")])
    )
    conn.send(h11.EndOfMessage())
    conn.receive_data(answer)
    conn.receive_data(b"")
    status, headers, body = 0, [], b""
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Response):
            status = event.status_code
            headers = [(k.decode(), v.decode()) for k, v in event.headers]
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)) or event is h11.NEED_DATA:
            return status, headers, body


_names = st.sampled_from(["X-Request-Id", "x-ratelimit-remaining", "Server", "Retry-After"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    status=st.sampled_from([200, 201, 400, 404, 429, 500, 503]),
    fields=st.lists(st.tuples(_names, st.text("abc 0123;=", max_size=8)), max_size=5),
    body=st.binary(max_size=300),
    framing=st.sampled_from(["length", "chunked", "close"]),
    cuts=st.lists(st.integers(1, 400), max_size=40),
    sizes=st.lists(st.integers(1, 64), max_size=40),
    interim=st.integers(0, 2),
    upper=st.booleans(),
)
def test_the_reader_agrees_with_h11_on_well_formed_answers(
    status: int,
    fields: list[tuple[str, str]],
    body: bytes,
    framing: str,
    cuts: list[int],
    sizes: list[int],
    interim: int,
    upper: bool,
) -> None:
    """Differential: any split of any well-formed answer (interim answers, header case,
    repeated fields, chunk boundaries and extensions) gives h11's status, headers and
    body, whatever the segments it arrives in."""
    head = [f"HTTP/1.1 {status} Whatever"]
    head += [f"{k}: {v.strip()}" for k, v in fields]
    if framing == "length":
        head.append(f"{'CONTENT-LENGTH' if upper else 'content-length'}: {len(body)}")
        payload = body
    elif framing == "chunked":
        head.append(f"Transfer-Encoding: {'Chunked' if upper else 'chunked'}")
        pieces, at = [], 0
        for c in [*sorted(set(cuts)), len(body)]:
            if at < min(c, len(body)):
                part = body[at : min(c, len(body))]
                pieces.append(b"%x;n=%d\r\n%s\r\n" % (len(part), at, part))
                at = min(c, len(body))
        payload = b"".join(pieces) + b"0\r\nX-Trailer: 1\r\n\r\n"
    else:
        payload = body
    answer = b"HTTP/1.1 100 Continue\r\n\r\n" * interim
    answer += "\r\n".join(head).encode() + b"\r\n\r\n" + payload
    expected = _h11_reads(answer)

    got = asyncio.run(exchange(_Segments(answer, list(sizes)), b"", 5.0, 1 << 20, TooLarge))  # type: ignore[arg-type]
    assert (got.status, got.body) == (expected[0], expected[2])
    joined: dict[str, list[str]] = {}
    for k, v in expected[1]:
        joined.setdefault(k, []).append(v)
    te = "transfer-encoding"  # h11 lower-cases this one value
    assert {k: v.lower() if k == te else v for k, v in got.headers.items()} == {
        k: ", ".join(v) for k, v in joined.items()
    }
    assert got.keep_alive == (framing != "close")
