"""A raw HTTP/1.1 server on 127.0.0.1 for the tests of the runner's transport: connection
handlers that send exact bytes, builders of framed answers, and one call that runs the
runner's client against such a server. Shared by the tests of odd or hostile servers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from toxeval.llm.client import Client, RequestFailed, RetryPolicy

BODY = b'{"choices": [{"message": {"content": "{}"}}]}'
ANSWER = {"choices": [{"message": {"content": "{}"}}]}  # BODY decoded
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """The head of the next request on the connection (its body read and dropped)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    await reader.readexactly(length)
    return head


def answering(*answers: bytes, close: bool = True) -> Handler:
    """A connection handler that answers each request it reads with the next of
    ``answers`` (sent as given), then closes the connection (or waits)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for answer in answers:
                await read_request(reader)
                writer.write(answer)
                await writer.drain()
            if not close:
                await asyncio.sleep(5)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    return handler


def serve(
    *connections: Handler | list[bytes], requests: int, retries: int = 0, **kw: Any
) -> tuple[list[Any], int]:
    """``requests`` posts in a row by one client (one slot) on a server whose n-th
    connection is ``connections[n]`` (a handler, or the answers :func:`answering` gives,
    keeping the connection open); the reply bodies (or the RequestFailed raised) and
    the number of connections made. ``kw`` goes to the Client."""
    pending = list(connections)
    made: list[asyncio.StreamWriter] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        made.append(writer)
        given = pending.pop(0) if pending else []
        run = answering(*given, close=False) if isinstance(given, list) else given
        await run(reader, writer)

    async def go() -> list[Any]:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        out: list[Any] = []
        try:
            policy = RetryPolicy(max_retries=retries, base_delay=0.001, max_delay=0.01)
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


def ok_answer(headers: bytes, body: bytes = BODY, status: bytes = b"200 OK") -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + headers + b"\r\n" + body


def sized(body: bytes = BODY, extra: bytes = b"") -> bytes:
    return ok_answer(b"Content-Length: %d\r\n" % len(body) + extra, body)


def chunked(*parts: bytes, trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n" + trailer
    return ok_answer(b"Transfer-Encoding: chunked\r\n", body + b"\r\n")
