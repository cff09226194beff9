"""uvicorn's HTTP protocol, with each answer sent in one write (``capes serve`` uses it).

uvicorn writes an answer's status line and headers with one write, and its body with
another: two system calls and, on TCP, two segments, which the client's kernel and the
client each take in one at a time. That second write is a good share of a small answer's
cost: served in one write, the bare route of ``scripts/bench`` carried 1.08 to 1.14 times as
many requests as with two, round by round (one worker, 16 connections; the README's "Each
answer in one write").

Here a write waits for the next one: the two go out together, at once, in one write. An
answer's head waits for its body, which uvicorn writes in the same step of the answer's task
(every answer but a stream's), and so each answer is one segment, sent the moment its body is.

A write that no other follows waits at most until the end of the event loop's turn. So a
stream's head goes out at the end of its turn even if its first event comes later, and so
does a lone write. Closing a connection first sends what is held.

Why not hold every write of a turn until its end (tried first): a turn ends after every task
step queued in it, under load many requests' handlers, and each answer would wait for all of
them. Here nothing of an answer leaves later than uvicorn would send its body.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: What ``uvicorn.run(http=…)`` is given: an import path, so that each worker process of
#: ``--workers N`` imports it too.
PROTOCOL = "api.one_write:OneWriteProtocol"


class PairedWrites:
    """A transport whose writes go out two at a time: a write is held until the next one,
    and both are then sent in one write; one that no other follows is sent at the end of
    the event loop's turn. Everything else is the wrapped transport's own."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._loop = loop or asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is None:
            # A bytearray could change after this call returns (asyncio's transports copy it).
            self._held = data if type(data) is bytes else bytes(data)
            self._loop.call_soon(self.flush)
            return
        self._held = None
        if not self._transport.is_closing():
            self._transport.write(held + data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Send what is held (nothing to a transport already closing)."""
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def get_write_buffer_size(self) -> int:
        held = 0 if self._held is None else len(self._held)
        return self._transport.get_write_buffer_size() + held

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol, on a :class:`PairedWrites` transport."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(PairedWrites(transport, self.loop))  # type: ignore[arg-type]
