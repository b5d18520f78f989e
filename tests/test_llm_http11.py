"""toxeval.llm.http11, the HTTP/1.1 response reader of the runner's direct path, against
raw answers from an asyncio server on 127.0.0.1: framing by Content-Length, chunks and
connection close, interim 1xx answers, when a connection is kept, and every malformed or
cut answer an httpcore protocol error (which the client retries), never a wrong body."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import httpcore
import pytest
from raw_http import BODY, TooLarge, answering, chunked, exchange_once, ok_answer, sized
from toxeval.llm.client import Client, RequestFailed, RetryPolicy
from toxeval.llm.http11 import MAX_HEAD_BYTES, request_head


def test_a_sized_answer_keeps_the_connection_for_the_next_request() -> None:
    got = exchange_once(answering(sized(), sized(b"{}", b"X-Two: a\r\nx-two:  b \r\n")), n=2)
    assert [(r.status, r.body, r.keep_alive) for r in got] == [
        (200, BODY, True),
        (200, b"{}", True),
    ]
    assert got[1].headers["x-two"] == "a, b" and got[1].reason == b"OK"


def test_chunked_bodies_are_joined_and_trailers_dropped() -> None:
    (r,) = exchange_once(answering(chunked(BODY[:10], BODY[10:], trailer=b"X-T: 1\r\n")))
    assert r.body == BODY and r.keep_alive and "x-t" not in r.headers
    (r,) = exchange_once(answering(chunked()))  # no chunk at all: an empty body
    assert r.body == b""


def test_interim_1xx_answers_are_skipped() -> None:
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
    (r,) = exchange_once(answering(early + sized()))
    assert (r.status, r.body) == (200, BODY) and "link" not in r.headers


def test_connection_close_and_http_1_0_answers_are_not_kept() -> None:
    (r,) = exchange_once(answering(sized(extra=b"Connection: Close\r\n")))
    assert r.body == BODY and not r.keep_alive
    (r,) = exchange_once(answering(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
    assert r.body == b"{}" and not r.keep_alive


def test_an_answer_without_length_runs_until_the_server_closes() -> None:
    (r,) = exchange_once(answering(ok_answer(b"", BODY)))
    assert r.body == BODY and not r.keep_alive


def test_no_body_for_204_and_bytes_after_an_answer_end_the_connection() -> None:
    (r,) = exchange_once(answering(ok_answer(b"", b"", status=b"204 No Content"), close=False))
    assert (r.status, r.body, r.keep_alive) == (204, b"", True)
    (r,) = exchange_once(answering(sized() + b"HTTP/1.1 200 OK\r\n"))  # never asked for
    assert r.body == BODY and not r.keep_alive


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"", "without sending a response"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "during the response head"),
        (sized()[:-5], "during the response body"),
        (chunked(BODY)[:-12], "closed the connection"),
        (ok_answer(b"Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"), "bad chunk size"),
        (ok_answer(b"Transfer-Encoding: chunked\r\n", b"-1\r\n"), "bad chunk size"),
        (ok_answer(b"Transfer-Encoding: chunked\r\n", b"2\r\n{}}\r\n0\r\n\r\n"), "longer than"),
        (sized(extra=b"Content-Length: 3\r\n"), "conflicting Content-Length"),
        (ok_answer(b"Content-Length: +5\r\n", b"{}"), "malformed Content-Length"),
        (ok_answer(b"X-A: 1\r\n  folded\r\nContent-Length: 2\r\n", b"{}"), "malformed header"),
        (ok_answer(b"No colon here\r\nContent-Length: 2\r\n", b"{}"), "malformed header"),
        (b"ICY 200 OK\r\n\r\n", "not an HTTP/1.1 status line"),
        (b"HTTP/1.1 101 Switching\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * MAX_HEAD_BYTES, "response head over"),
    ],
)
def test_a_malformed_or_cut_answer_is_a_protocol_error(answer: bytes, message: str) -> None:
    e = exchange_once(answering(answer))
    assert isinstance(e, httpcore.RemoteProtocolError), e
    assert message in str(e)


def test_a_body_over_the_cap_is_refused_before_it_is_read() -> None:
    e = exchange_once(answering(sized(b"x" * 100)), max_body=50)
    assert isinstance(e, TooLarge) and "Content-Length 100" in str(e)
    assert isinstance(
        exchange_once(answering(chunked(b"x" * 40, b"x" * 40)), max_body=50), TooLarge
    )
    assert isinstance(exchange_once(answering(ok_answer(b"", b"x" * 100)), max_body=50), TooLarge)


def test_a_header_that_would_split_the_request_is_refused() -> None:
    for name, value in [(b"Authorization", b"Bearer a\r\nX: b"), (b"A:B", b"c"), (b"", b"v")]:
        with pytest.raises(httpcore.LocalProtocolError):
            request_head(b"/", [(name, value)])


def test_the_client_reads_chunked_gzip_answers_and_replaces_a_closed_connection() -> None:
    packed = gzip.compress(BODY)
    gzipped = ok_answer(
        b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(packed), packed),
    )
    # per connection, the answers it gives
    served = [[gzipped, sized(extra=b"Connection: close\r\n")], [sized()]]
    connections = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        await answering(*served.pop(0), close=False)(reader, writer)

    async def go() -> list[Any]:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with Client(url, concurrency=1, retry=RetryPolicy(max_retries=0)) as c:
                return [await c.post("/x", {"a": 1}) for _ in range(3)]
        finally:
            server.close()

    replies = asyncio.run(asyncio.wait_for(go(), 20))
    assert [r.body for r in replies] == [{"choices": [{"message": {"content": "{}"}}]}] * 3
    assert len(connections) == 2  # the first served two requests, then said close


def test_the_client_retries_a_cut_answer_on_a_new_connection() -> None:
    answers = [sized()[:-5], sized()]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answering(answers.pop(0), close=True)(reader, writer)

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with Client(url, concurrency=1, retry=RetryPolicy(max_retries=0)) as c:
                with pytest.raises(RequestFailed, match="RemoteProtocolError"):
                    await c.post("/x", {"a": 1})
                return await c.post("/x", {"a": 1})
        finally:
            server.close()

    assert asyncio.run(asyncio.wait_for(go(), 20)).attempts == 1
