"""A raw HTTP/1.1 server on 127.0.0.1 for the tests of toxeval.llm.http11: handlers that
send exact bytes, one call that runs exchanges against them through the runner's direct
path, and builders of framed answers. Shared by the tests of the reader and of odd or
hostile servers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from toxeval.llm.http11 import exchange, request_head
from toxeval.llm.network import NativeBackend

BODY = b'{"choices": [{"message": {"content": "{}"}}]}'
REQUEST = request_head(b"/v1/x", [(b"Host", b"h")]) + b"Content-Length: 2\r\n\r\n{}"


class TooLarge(Exception):
    pass


def answering(*answers: bytes, close: bool = True) -> Callable[..., Awaitable[None]]:
    """A connection handler that answers each request it reads with the next of
    ``answers`` (sent as given), then closes the connection (or waits)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for answer in answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                writer.write(answer)
                await writer.drain()
            if not close:
                await asyncio.sleep(5)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    return handler


def exchange_once(
    handler: Callable[..., Awaitable[None]], n: int = 1, max_body: int = 1 << 20
) -> Any:
    """``n`` exchanges on one connection; the responses, or the exception raised."""

    async def go() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stream = await NativeBackend().connect_tcp("127.0.0.1", port, timeout=5)
        try:
            return [await exchange(stream, REQUEST, 5.0, max_body, TooLarge) for _ in range(n)]
        except Exception as e:
            return e
        finally:
            await stream.aclose()
            server.close()

    return asyncio.run(asyncio.wait_for(go(), 20))


def ok_answer(headers: bytes, body: bytes = BODY, status: bytes = b"200 OK") -> bytes:
    return b"HTTP/1.1 " + status + b"\r\n" + headers + b"\r\n" + body


def sized(body: bytes = BODY, extra: bytes = b"") -> bytes:
    return ok_answer(b"Content-Length: %d\r\n" % len(body) + extra, body)


def chunked(*parts: bytes, trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n" + trailer
    return ok_answer(b"Transfer-Encoding: chunked\r\n", body + b"\r\n")
