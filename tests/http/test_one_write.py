"""Each answer in one write (api/one_write.py): how ``capes serve`` serves.

The transport under the protocol is a recording one (what it was asked to write, and when): the
point is how many writes an answer costs, which a client on a socket cannot tell apart.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from api.one_write import PROTOCOL, OneWriteProtocol, PairedWrites
from cli.main import server_options

REQUEST = b"GET / HTTP/1.1\r\nHost: table\r\n\r\n"


class Recording(asyncio.Transport):
    """A transport that keeps what it is asked to write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def turns(count: int = 5) -> None:
    """Let the event loop run ``count`` turns."""
    for _ in range(count):
        await asyncio.sleep(0)


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


WireTest = Callable[[Recording, PairedWrites], Coroutine[Any, Any, None]]


def on_a_wire(test: WireTest) -> Callable[[], None]:
    """The test, run on an event loop with a recording transport and a PairedWrites on it."""

    def run_on_a_wire() -> None:
        async def main() -> None:
            wire = Recording()
            await test(wire, PairedWrites(wire))

        asyncio.run(main())

    run_on_a_wire.__name__ = test.__name__
    run_on_a_wire.__doc__ = test.__doc__
    return run_on_a_wire


# -- the transport ------------------------------------------------------------------------------


@on_a_wire
async def test_a_write_waits_for_the_next_and_the_two_go_out_at_once_in_one_write(
    wire: Recording, held: PairedWrites
) -> None:
    held.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert wire.writes == []
    held.write(b"{}")
    assert wire.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
    await turns()
    assert wire.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


@on_a_wire
async def test_a_write_that_no_other_follows_goes_out_at_the_end_of_the_turn(
    wire: Recording, held: PairedWrites
) -> None:
    held.write(b"head")
    assert wire.writes == []
    await turns(1)
    assert wire.writes == [b"head"]
    held.writelines([b"event 1", b"event 2", b"event 3"])
    assert wire.writes == [b"head", b"event 1event 2"]
    await turns(1)
    assert wire.writes == [b"head", b"event 1event 2", b"event 3"]


@on_a_wire
async def test_closing_sends_what_is_held_first(
    wire: Recording, held: PairedWrites
) -> None:
    held.write(b"last words")
    held.close()
    assert (wire.writes, wire.closed) == ([b"last words"], True)
    await turns(1)
    assert wire.writes == [b"last words"]


@on_a_wire
async def test_an_abort_drops_what_is_held(
    wire: Recording, held: PairedWrites
) -> None:
    held.write(b"never sent")
    held.abort()
    await turns(1)
    assert (wire.writes, wire.aborted) == ([], True)


@on_a_wire
async def test_nothing_is_written_once_the_connection_is_closing(
    wire: Recording, held: PairedWrites
) -> None:
    held.write(b"too late")
    wire.closed = True  # the client went away during the turn
    await turns(1)
    assert wire.writes == []


@on_a_wire
async def test_what_is_held_counts_in_the_write_buffer_and_a_bytearray_is_copied(
    wire: Recording, held: PairedWrites
) -> None:
    data = bytearray(b"12345")
    held.write(data)
    data[:] = b"xxxxx"
    assert held.get_write_buffer_size() == 5
    await turns(1)
    assert wire.writes == [b"12345"]
    assert held.get_write_buffer_size() == 0
    assert held.get_extra_info("peername") == ("127.0.0.1", 50000)  # the transport's own


# -- the protocol -------------------------------------------------------------------------------


async def plain(scope: Any, receive: Any, send: Any) -> None:
    """An answer whose head and body are sent in the same turn, as Litestar sends one."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def served(protocol_class: type[HttpToolsProtocol], app: Any,
           wire: Recording) -> HttpToolsProtocol:
    config = Config(app=app, lifespan="off", log_level="warning", access_log=False)
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={},
                              _loop=asyncio.get_running_loop())
    protocol.connection_made(wire)
    return protocol


def test_an_answer_is_one_write_where_uvicorn_makes_two() -> None:
    async def test() -> None:
        writes = {}
        for name, protocol_class in (("uvicorn", HttpToolsProtocol),
                                     ("one write", OneWriteProtocol)):
            wire = Recording()
            protocol = served(protocol_class, plain, wire)
            protocol.data_received(REQUEST)
            await turns()
            protocol.connection_lost(None)
            writes[name] = wire.writes
            assert b"".join(wire.writes).startswith(b"HTTP/1.1 200 OK\r\n")
            assert b"".join(wire.writes).endswith(b"\r\n\r\n{}")
        assert len(writes["uvicorn"]) == 2
        assert len(writes["one write"]) == 1
        assert writes["one write"] == [b"".join(writes["uvicorn"])]

    run(test)


def test_a_streams_head_goes_out_before_its_first_event() -> None:
    async def test() -> None:
        first_event = asyncio.Event()

        async def stream(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            await first_event.wait()
            await send({"type": "http.response.body", "body": b"data: 1\n\n",
                        "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        wire = Recording()
        protocol = served(OneWriteProtocol, stream, wire)
        protocol.data_received(REQUEST)
        await turns()
        assert len(wire.writes) == 1
        assert wire.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
        assert wire.writes[0].endswith(b"\r\n\r\n")
        first_event.set()
        await turns()
        assert wire.writes[1:] == [b"9\r\ndata: 1\n\n\r\n0\r\n\r\n"]
        protocol.connection_lost(None)

    run(test)


def test_capes_serve_serves_with_it() -> None:
    args = argparse.Namespace(host="127.0.0.1", port=8000, workers=2, log_level="warning")
    options = server_options(args)
    assert options["http"] == PROTOCOL
    module, _, name = PROTOCOL.partition(":")
    assert getattr(importlib.import_module(module), name) is OneWriteProtocol
    assert options["access_log"] is False


def test_an_answer_leaves_the_moment_its_body_is_written() -> None:
    async def test() -> None:
        wire = Recording()
        seen: list[list[bytes]] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            await plain(scope, receive, send)
            seen.append(list(wire.writes))  # before the turn ends: nothing waits for it

        protocol = served(OneWriteProtocol, app, wire)
        protocol.data_received(REQUEST)
        await turns()
        protocol.connection_lost(None)
        assert len(seen[0]) == 1
        assert seen[0][0].endswith(b"\r\n\r\n{}")

    run(test)
