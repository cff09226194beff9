"""uvicorn's HTTP protocol, with each answer sent in one write (``capes serve`` uses it).

uvicorn writes an answer's status line and headers with one write, and its body with
another: two system calls and, on TCP, two segments, which the client's kernel and the
client each take in one at a time. That second write is a good share of a small answer's
cost: in a probe, the bare route of ``scripts/bench`` answered 4,977 to 5,828 requests/s
with one write against 4,128 to 4,324 with two (alternated, one worker, 16 connections).

Here the writes a connection gets during one turn of the event loop are held until the end of
that turn, then sent together in one write. An answer whose head and body are sent in the
same turn goes out as one segment, and that is every answer except a stream's.

Nothing waits longer than the turn under way. A stream's head goes out at the end of its turn,
even when its first event comes later. Closing a connection first sends what is held.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: What ``uvicorn.run(http=…)`` is given: an import path, so that each worker process of
#: ``--workers N`` imports it too.
PROTOCOL = "api.one_write:OneWriteProtocol"


class TurnWrites:
    """A transport whose writes are held until the end of the event loop's turn, then sent in
    one write. Everything else is the wrapped transport's own."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._transport = transport
        self._held: list[bytes] = []
        self._loop = loop or asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        # A bytearray could change after this call returns (asyncio's transports copy it too).
        self._held.append(data if type(data) is bytes else bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Send what is held, in one write (nothing to a transport already closing)."""
        held = self._held
        if held:
            self._held = []
            if not self._transport.is_closing():
                self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._held))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = []
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol, on a :class:`TurnWrites` transport."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(TurnWrites(transport, self.loop))  # type: ignore[arg-type]
