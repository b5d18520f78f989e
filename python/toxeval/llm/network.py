"""A native asyncio network backend for httpcore: the sockets under the LLM runner's client.

httpcore's own backend on asyncio goes through AnyIO, which wraps every socket read and
write in a cancel scope (``anyio.fail_after``) and polls the socket of every idle
connection before reusing it; at the runner's rates that is most of the client's CPU.
This backend implements the same contract (``httpcore.AsyncNetworkBackend`` and
``AsyncNetworkStream``, see httpcore's ``_backends/base.py`` and ``_backends/anyio.py``)
on an :class:`asyncio.Protocol`:

- ``read`` returns buffered bytes at once and otherwise waits on one future, with the
  timeout as a ``loop.call_later`` timer; ``b""`` at end of stream;
- ``write`` hands the bytes to the transport and waits only when the transport asks the
  writer to pause (its buffer is over the high-water mark);
- ``start_tls`` upgrades the connection with ``loop.start_tls``;
- ``expire(error)`` ends an exchange from outside (the request deadline's timer in
  :mod:`toxeval.llm.connections`): the connection is aborted and the waiting read or
  write, and every later one, raises ``error``;
- ``get_extra_info("is_readable")`` (httpcore's "did the server close this idle
  connection?") is answered from what the protocol has seen (bytes, end of stream, a
  lost connection) instead of polling the socket; TLS records that carry no data, such
  as the tickets a TLS 1.3 server sends after the handshake, do not count.

Errors are httpcore's, as its AnyIO backend maps them, because the client's retries
depend on them: a timeout is ``ConnectTimeout``/``ReadTimeout``/``WriteTimeout``, a
refused or failed connection (and a failed TLS handshake) ``ConnectError``, a reset or
closed connection ``ReadError``/``WriteError``.

:class:`NativeBackend` is used only when the running event loop is asyncio's; under any
other (trio) each connection is made by httpcore's own backend.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any

import httpcore

__all__ = ["NativeBackend", "NativeStream"]

# Reading pauses while this many bytes wait unread (a server that sends faster than
# the body is consumed cannot fill memory) and resumes below a quarter of it.
_READ_HIGH_WATER = 1024 * 1024
# Writes smaller than this together are joined and handed to the transport at the next
# read or the next turn of the event loop, whichever comes first: httpcore writes a
# request's head and body separately, and with TCP_NODELAY (asyncio's default) each
# write is a send() and a segment of its own, which both ends pay for.
_COALESCE = 64 * 1024


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        import sniffio

        if sniffio.current_async_library() != "asyncio":
            return None
    except Exception:  # sniffio missing or no async library detected
        pass
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Protocol(asyncio.Protocol):
    """Buffers what arrives and wakes the one reader or writer waiting on it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None  # why the connection was lost, if not EOF
        self.expired: Exception | None = None  # set by NativeStream.expire
        self.reading_paused = False
        self.writing_paused = False
        self.waiter: asyncio.Future[None] | None = None  # a reader's
        self.drain: asyncio.Future[None] | None = None  # a writer's

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > _READ_HIGH_WATER and not self.reading_paused and self.transport:
            self.reading_paused = True
            self.transport.pause_reading()
        _wake(self.waiter)

    def eof_received(self) -> bool:
        self.eof = True
        _wake(self.waiter)
        return False  # the transport closes itself: nothing is written after an EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        _wake(self.waiter)
        _wake(self.drain)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        _wake(self.drain)

    # -- used by NativeStream
    def take(self, max_bytes: int) -> bytes:
        chunks = self.chunks
        first = chunks.popleft()
        if len(first) > max_bytes:
            chunks.appendleft(first[max_bytes:])
            first = first[:max_bytes]
        else:
            while chunks and len(first) + len(chunks[0]) <= max_bytes:
                first += chunks.popleft()
        self.size -= len(first)
        if self.reading_paused and self.size <= _READ_HIGH_WATER // 4 and self.transport:
            self.reading_paused = False
            self.transport.resume_reading()
        return first

    async def wait(self, attr: str, timeout: float | None, error: type[Exception]) -> None:
        """Wait for the protocol to wake ``attr`` ("waiter" or "drain"); ``error`` after
        ``timeout`` seconds."""
        fut: asyncio.Future[None] = self.loop.create_future()
        setattr(self, attr, fut)
        timer = None if timeout is None else self.loop.call_later(timeout, _expire, fut, error)
        try:
            await fut
        finally:
            setattr(self, attr, None)
            if timer is not None:
                timer.cancel()


def _wake(fut: asyncio.Future[None] | None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(None)


def _expire(fut: asyncio.Future[None] | None, error: type[Exception] | Exception) -> None:
    if fut is not None and not fut.done():
        fut.set_exception(error() if isinstance(error, type) else error)


class NativeStream(httpcore.AsyncNetworkStream):
    """One connection: an asyncio transport and its :class:`_Protocol`."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._closed = False
        self._pending: list[bytes] = []  # writes not yet handed to the transport
        self._pending_size = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        if p.expired is not None:
            raise p.expired
        if self._closed:
            raise httpcore.ReadError("the connection is closed")
        if self._pending:
            self._flush()
        if not p.chunks and not p.eof and not p.lost:
            await p.wait("waiter", timeout, httpcore.ReadTimeout)
        if p.chunks:
            return p.take(max_bytes)
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__)
        return b""  # end of stream

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        p = self._protocol
        if p.expired is not None:
            raise p.expired
        if self._closed or p.lost or self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        pending = self._pending
        pending.append(buffer)
        self._pending_size += len(buffer)
        if self._pending_size < _COALESCE or p.writing_paused:
            if len(pending) == 1:
                p.loop.call_soon(self._flush)
            if not p.writing_paused:
                return
        self._flush()
        while p.writing_paused and not p.lost:
            await p.wait("drain", timeout, httpcore.WriteTimeout)
        if p.lost and p.error is not None:
            raise httpcore.WriteError(str(p.error) or type(p.error).__name__)

    def _flush(self) -> None:
        """Hand the pending writes to the transport as one (one send, one segment)."""
        pending = self._pending
        if pending and not self._closed:
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
        pending.clear()
        self._pending_size = 0

    def expire(self, error: Exception) -> None:
        """End the exchange on this connection now (a deadline passed): the waiting read
        or write, and every later one, raises ``error``; the connection is aborted
        (nothing more is sent or read on it)."""
        p = self._protocol
        if p.expired is not None:
            return
        p.expired = error
        _expire(p.waiter, error)
        _expire(p.drain, error)
        self._pending.clear()
        self._pending_size = 0
        self._transport.abort()

    async def aclose(self) -> None:
        if not self._closed:
            self._flush()
            self._closed = True
            self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = self._protocol.loop
        try:
            upgrade = loop.start_tls(
                self._transport, self._protocol, ssl_context, server_hostname=server_hostname
            )
            transport = await asyncio.wait_for(upgrade, timeout)
        except asyncio.TimeoutError:
            await self.aclose()
            raise httpcore.ConnectTimeout("TLS handshake timed out") from None
        except (OSError, ssl.SSLError, ConnectionError) as e:
            await self.aclose()
            raise httpcore.ConnectError(str(e) or type(e).__name__) from e
        except BaseException:
            await self.aclose()
            raise
        if transport is None:  # the peer closed the connection during the handshake
            await self.aclose()
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        return NativeStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        t = self._transport
        if info == "ssl_object":
            return t.get_extra_info("ssl_object")
        if info == "client_addr":
            return t.get_extra_info("sockname")
        if info == "server_addr":
            return t.get_extra_info("peername")
        if info == "socket":
            return t.get_extra_info("socket")
        if info == "is_readable":
            p = self._protocol
            return bool(p.chunks) or p.eof or p.lost or self._closed or p.expired is not None
        return None


class NativeBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio's own transports (see the module); under
    another event loop each call goes to httpcore's default backend."""

    def __init__(self) -> None:
        self._fallback: httpcore.AsyncNetworkBackend | None = None

    def _other(self) -> httpcore.AsyncNetworkBackend:
        if self._fallback is None:
            try:  # the backend httpcore picks when given none (trio's or AnyIO's)
                from httpcore._backends.auto import AutoBackend

                self._fallback = AutoBackend()
            except ImportError:
                self._fallback = httpcore.AnyIOBackend()
        return self._fallback

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = _running_asyncio_loop()
        if loop is None:
            return await self._other().connect_tcp(
                host, port, timeout, local_address, socket_options
            )
        local = None if local_address is None else (local_address, 0)
        connect = loop.create_connection(lambda: _Protocol(loop), host, port, local_addr=local)
        stream = await _connected(connect, timeout)
        _apply(stream, socket_options)
        return stream

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = _running_asyncio_loop()
        if loop is None:
            return await self._other().connect_unix_socket(path, timeout, socket_options)
        connect = loop.create_unix_connection(lambda: _Protocol(loop), path)
        stream = await _connected(connect, timeout)
        _apply(stream, socket_options)
        return stream

    async def sleep(self, seconds: float) -> None:
        if _running_asyncio_loop() is None:
            await self._other().sleep(seconds)
        else:
            await asyncio.sleep(seconds)


async def _connected(connect: Any, timeout: float | None) -> NativeStream:
    try:
        transport, protocol = await asyncio.wait_for(connect, timeout)
    except asyncio.TimeoutError:
        raise httpcore.ConnectTimeout("connecting timed out") from None
    except OSError as e:  # refused, unreachable, name not resolved
        raise httpcore.ConnectError(str(e) or type(e).__name__) from e
    return NativeStream(transport, protocol)


def _apply(stream: NativeStream, socket_options: Iterable[Any] | None) -> None:
    sock: socket.socket | None = stream.get_extra_info("socket")
    for option in socket_options or ():
        if sock is not None:
            sock.setsockopt(*option)
