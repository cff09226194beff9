"""The writer in a process of its own (``CAPES_WRITER=process``, issue 15).

Why: a server process's event loop and its writer thread share one interpreter lock. Under
load the loop always has work, so each time the writer wants the lock back (to decide a group,
after each call into the store) it waits up to the interpreter's switch interval, and the loop
then waits for the writer's answer; measured under the game mix, the loop used about half a
core and the server about one, while the machine's second core was partly idle. In a process
of its own the writer has an interpreter of its own: the loop only reads requests, checks
tokens, and hands each command over a socket, and the writer decides and commits on another
core.

What crosses the socket: frames of a 4-byte length and a pickle. Each request names a tag, an
operation and its arguments; each answer carries the tag, an error or a value. A request's
campaign id goes as its 16 bytes and a command as its class's name and its fields' values
(:func:`pack_command`): pickle's own form of the two took most of a command's frame to write
and to read (see :func:`pack_command`).

- ``x`` a command: the writer process answers with the command's HTTP answer and its live
  streams' message already encoded (:class:`Rendered`), so the loop encodes nothing;
- ``v`` the board or ledgers of now, rendered and encoded there (once per state of a
  campaign, whatever the number of seats reading it), with the version it shows, or None
  when it cannot tell; the server holds them and answers from them while they are current
  (:mod:`api.held_views`);
- ``l`` the campaign of now (:meth:`application.committer.Committer.latest`);
- ``c`` a named write (:mod:`api.operations`), in turn with the commands;
- ``stop``: finish what came before it, then exit;
- ``p`` a campaign's live message (:func:`api.services.live_message`) for the other servers'
  streams: the shared writer process passes it on to every other server connected, unasked,
  in a frame tagged :data:`LIVE`, and answers nothing. So the workers of ``capes serve
  --workers N`` share their live events through the writer they share, with no Redis.

This module is the server's side (:class:`RemoteWriter`) and what both sides share (the
frames, errors); the process itself is :mod:`api.writer_process`. What the writer process
guarantees is the writer thread's (:mod:`application.committer`): one writer, commands
committed in groups in arrival order, no answer before its events are stored. It runs its
groups on its main thread; a campaign it does not hold yet is made ready (its log
verified, loaded) by a small pool of threads meanwhile, its commands waiting in order.

If the writer process dies, every request waiting on it gets a 503 saying that its command may
or may not have been stored, and the next request starts a new one.

With several workers (``capes serve --workers N``) the workers share one writer process, which
``capes serve`` starts (:mod:`cli.writer_hub`) and names to them in ``CAPES_WRITER_SOCKET``: each
worker's :class:`RemoteWriter` connects to it instead of starting its own, so that every
campaign has one writer whichever worker a request reaches, and when it dies ``capes serve``
starts it again and the workers connect anew. The writer process ignores
SIGINT and SIGTERM: it stops when the server tells it to (after finishing what it was sent) or
when the server's end of the socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import logging
import os
import pickle
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
from litestar.exceptions import ServiceUnavailableException

from api.held_views import HeldViews
from application.aggregate import Campaign
from application.children import deaf_to_ctrl_c
from application.config import WRITER_SOCKET

log = logging.getLogger(__name__)

_LENGTH = struct.Struct("!I")
#: The tag of a frame the writer process sends unasked: another server's live message,
#: ``(LIVE, None, (campaign_id, message))``.
LIVE = -1
#: Seconds the server waits for a new writer process to say it is ready.
START_TIMEOUT = 60.0
#: Seconds between tries to connect to a shared writer process that is not listening yet.
CONNECT_RETRY = 0.05


class Rendered(msgspec.Struct, frozen=True):
    """A command run by the writer process: its HTTP answer (an ``Applied``, as JSON) and what
    its campaign's live streams are sent (``api.services.live_message``), ready to write."""

    version: int
    position: int
    answer: bytes
    live: bytes


class WriterGone(ServiceUnavailableException):
    """The writer process stopped while a request waited on it (HTTP 503)."""


# -- frames --------------------------------------------------------------------------------


def frame(item: Any) -> bytes:
    """``item`` pickled, after its length."""
    body = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class Frames:
    """Cuts a byte stream into the items of its frames."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._buffer
        buffer += data
        items, at, size = [], 0, len(buffer)
        while size - at >= 4:
            (length,) = _LENGTH.unpack_from(buffer, at)
            if size - at - 4 < length:
                break
            items.append(pickle.loads(buffer[at + 4:at + 4 + length]))
            at += 4 + length
        del buffer[:at]
        return items


def pack_error(error: BaseException) -> tuple[type[BaseException], tuple[Any, ...],
                                               dict[str, Any]]:
    """An exception as (class, args, attributes): the project's errors take other arguments
    than their ``args`` (``CampaignConflict(campaign_id, expected, current)``), which pickle
    alone would not rebuild."""
    return type(error), error.args, dict(getattr(error, "__dict__", {}))


def unpack_error(packed: tuple[type[BaseException], tuple[Any, ...],
                               dict[str, Any]]) -> BaseException:
    kind, args, attributes = packed
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(attributes)
    return error


def answer_frame(tag: int, error: BaseException | None, value: Any) -> bytes:
    """One answer's frame; an error or value that does not pickle becomes an error saying so."""
    try:
        return frame((tag, None if error is None else pack_error(error), value))
    except Exception as e:
        log.exception("the writer process could not send an answer")
        failed = RuntimeError(f"the writer's answer could not be sent: {e}")
        return frame((tag, pack_error(failed), None))


# -- what a request carries --------------------------------------------------------------------

#: A command as a frame carries it: its class's ``module:qualname`` and its fields' values, or
#: None and the command itself if it is not a msgspec Struct.
PackedCommand = tuple[str | None, Any]
#: Campaign ids the writer process keeps as objects (then it starts again: a bound).
IDS_KEPT = 100_000
_NAMES: dict[type[Any], str] = {}
_CLASSES: dict[str, type[Any]] = {}


def pack_command(command: Any) -> PackedCommand:
    """``command`` for a frame: a msgspec Struct as its class's name and its fields' values.

    Why not pickle it as it is: pickle writes a Struct with keyword-only fields as a call of
    ``msgspec._utils.rebuild`` with a dict of its field names, both looked up as globals when
    read, and the campaign's ``UUID`` through its ``__reduce_ex__`` and its Python
    ``__setstate__``: 89,000 instructions to write and read a command's frame, against 35,000
    so (callgrind over the HTTP mix's commands; 15.3 against 6.2 µs of CPU in process). Read
    back as pickle reads it back: by the class's constructor, the fields as keywords, not
    validated again."""
    kind = type(command)
    if not isinstance(command, msgspec.Struct):
        return None, command
    name = _NAMES.get(kind)
    if name is None:
        name = _NAMES[kind] = f"{kind.__module__}:{kind.__qualname__}"
    return name, msgspec.structs.astuple(command)


def unpack_command(packed: PackedCommand) -> Any:
    """The command :func:`pack_command` packed."""
    name, values = packed
    if name is None:
        return values
    kind = _CLASSES.get(name)
    if kind is None:
        module, _, qualname = name.partition(":")
        found: Any = getattr(importlib.import_module(module), qualname, None)
        if not (isinstance(found, type) and issubclass(found, msgspec.Struct)):
            raise TypeError(f"{name} is not a command's class")
        kind = _CLASSES[name] = found
    return kind(**dict(zip(kind.__struct_fields__, values, strict=True)))


class CampaignIds:
    """Campaign ids from their 16 bytes, one object an id: the writer's dicts of campaigns
    then find an id that is the very key object, without a call of ``UUID.__eq__`` (Python)."""

    def __init__(self, kept: int = IDS_KEPT) -> None:
        self._ids: dict[bytes, UUID] = {}
        self._kept = kept

    def __call__(self, raw: bytes) -> UUID:
        found = self._ids.get(raw)
        if found is None:
            if len(self._ids) >= self._kept:
                self._ids.clear()
            found = self._ids[raw] = UUID(bytes=raw)
        return found


def execute_request(campaign_id: UUID, command: Any, narration: str = "",
                    expected_version: int | None = None) -> tuple[Any, ...]:
    """The arguments of an ``x`` request, as they cross the socket."""
    return campaign_id.bytes, pack_command(command), narration, expected_version


def view_request(campaign_id: UUID, kind: str, position: int | None = None,
                 version: int | None = None) -> tuple[Any, ...]:
    """The arguments of a ``v`` request, as they cross the socket."""
    return campaign_id.bytes, kind, position, version


# -- the server's side ------------------------------------------------------------------------


class _Link(asyncio.Protocol):
    """The server's end of the socket: answers go to the futures waiting for them."""

    def __init__(self, writer: RemoteWriter) -> None:
        self.writer = writer
        self.frames = Frames()

    def data_received(self, data: bytes) -> None:
        pending = self.writer.pending
        for tag, error, value in self.frames.feed(data):
            if tag == LIVE:
                self.writer.heard(*value)
                continue
            future = pending.pop(tag, None)
            if future is None or future.done():
                continue
            if error is not None:
                future.set_exception(unpack_error(error))
            else:
                future.set_result(value)

    def connection_lost(self, exc: Exception | None) -> None:
        self.writer.lost()


class RemoteWriter:
    """The server's handle on its writer process: the writer thread's interface
    (``execute``, ``call``, ``latest``, ``start``, ``stop``) over a socket, plus ``view``."""

    def __init__(self, environ: Mapping[str, str], held: HeldViews | None = None) -> None:
        self._environ = dict(environ)
        #: The boards and ledgers the writer process rendered, answered from here while
        #: current (:mod:`api.held_views`).
        self.held = held if held is not None else HeldViews(None)
        #: The shared writer process's socket (several workers), or None: this server
        #: starts a writer process of its own.
        self.shared = environ.get(WRITER_SOCKET, "").strip() or None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self._tags = itertools.count(1)
        self._out: list[bytes] = []
        self._transport: asyncio.Transport | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._starting: asyncio.Future[None] | None = None
        self._stopping = False
        #: Where the live messages of the other workers go (:meth:`relay`), or None: this
        #: server shares none (one worker, or Redis shares them).
        self.on_live: Callable[[UUID, bytes], None] | None = None
        #: The connection made again after the shared writer process went (see :meth:`lost`).
        self._reconnecting: asyncio.Task[None] | None = None

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer process, once it answers (done by the first write if not before,
        and again after the process died)."""
        if self._transport is not None:
            return
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._spawn())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        finally:
            if starting.done():
                self._starting = None

    #: What :meth:`running` tells about, for people.
    kind = "the writer process"

    def running(self) -> bool:
        """Whether the writer process is connected and, when it is this server's own, has not
        exited (``GET /health``). A look at its exit status, no wait: the socket's end may not
        have been heard yet."""
        process = self._process
        return self._transport is not None and (process is None or process.poll() is None)

    async def _spawn(self) -> None:
        if self.shared is not None:
            await self._connect(self.shared)
            return
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
        env |= self._environ
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        try:
            with deaf_to_ctrl_c():  # it stops when told (application/children.py)
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "api.writer_process", str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),), env=env)
        finally:
            theirs.close()
        ready: asyncio.Future[Any] = loop.create_future()
        self.pending[0] = ready
        transport, _ = await loop.connect_accepted_socket(lambda: _Link(self), ours)
        self._transport = transport
        try:
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except BaseException as e:
            self._transport = None
            transport.close()
            process = self._process
            if process.poll() is None:
                process.kill()
            raise RuntimeError(f"the writer process did not start (exit status "
                               f"{process.wait()}): its error is above") from e

    async def _connect(self, path: str) -> None:
        """Connect to the shared writer process, waiting for it to listen (``capes serve``
        may be starting it, or starting it again) and to say it is ready."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            ready: asyncio.Future[Any] = loop.create_future()
            self.pending[0] = ready
            try:
                transport, _ = await loop.create_unix_connection(lambda: _Link(self), path)
            except (FileNotFoundError, ConnectionRefusedError) as e:
                self.pending.pop(0, None)
                if loop.time() > deadline:
                    raise RuntimeError(f"no writer process listens at {path} ({e}): is "
                                       "`capes serve` running?") from e
                await asyncio.sleep(CONNECT_RETRY)
                continue
            self._transport = transport
            try:
                await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
            except WriterGone:
                continue  # it closed before it was ready (stopping): try again
            except BaseException:
                self._transport = None
                transport.close()
                raise
            return

    async def stop(self) -> None:
        """Tell the writer process to finish what it was sent and exit; wait for it (a shared
        writer process only loses this server's connection: ``capes serve`` stops it)."""
        process, transport = self._process, self._transport
        self._stopping = True
        self.held.close()
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if transport is not None and self.shared is not None:
            transport.close()
            self._transport = None
            return
        if transport is not None:
            self._send(frame((0, "stop", None)))
            self._flush()
        if process is not None:
            await asyncio.to_thread(_wait, process)
        if transport is not None:
            transport.close()
        self._transport = self._process = None

    def lost(self) -> None:
        """The writer process's end closed: everything waiting on it fails with a 503."""
        self._transport = None
        self._out.clear()
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(WriterGone(
                    "the writer process stopped: this request's command may or may not have "
                    "been stored; read the campaign's log before sending it again"))
        process = self._process
        if process is not None and process.poll() is None and not self._stopping:
            # It closed the socket but lives on (stuck): the next request starts another.
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        if self.shared is not None and self.on_live is not None and not self._stopping:
            # The other workers' live messages come through the shared writer: connect again
            # at once (``capes serve`` starts it again), not only at this worker's next request.
            self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        try:
            await self.start()
        except Exception:
            log.exception("could not connect to the writer process again; the next request "
                          "tries once more")

    # -- requests --------------------------------------------------------------------------

    async def _ask(self, operation: str, arguments: Any) -> Any:
        if self._transport is None:
            await self.start()
        loop = asyncio.get_running_loop()
        tag = next(self._tags)
        future: asyncio.Future[Any] = loop.create_future()
        self.pending[tag] = future
        self._send(frame((tag, operation, arguments)))
        # Shielded: a client that goes away does not take its command back once it is sent.
        return await asyncio.shield(future)

    def _send(self, data: bytes) -> None:
        # The requests of one pass of the event loop go in one write.
        if not self._out:
            asyncio.get_running_loop().call_soon(self._flush)
        self._out.append(data)

    def _flush(self) -> None:
        if self._out and self._transport is not None:
            self._transport.write(b"".join(self._out))
        self._out.clear()

    def relay(self, campaign_id: UUID, message: bytes) -> None:
        """Have the shared writer process pass a live message of this worker's on to the
        other workers (``p``). Not connected: dropped; a stream that missed it reads the log
        at the next message it gets (:mod:`api.live`)."""
        if self._transport is not None:
            self._send(frame((0, "p", (campaign_id, message))))

    def heard(self, campaign_id: UUID, message: bytes) -> None:
        """Another worker's live message, passed on by the shared writer process."""
        self.held.drop(campaign_id)
        if self.on_live is not None:
            self.on_live(campaign_id, message)

    async def execute(self, campaign_id: UUID, command: Any, *, narration: str = "",
                      expected_version: int | None = None) -> Rendered:
        """Run a command; answered once its events are stored."""
        try:
            version, position, answer, live = await self._ask(
                "x", execute_request(campaign_id, command, narration, expected_version))
        finally:
            # Stored or refused, the views held were of the campaign before it: its next read
            # goes to the writer without looking at the store first.
            self.held.drop(campaign_id)
        return Rendered(version, position, answer, live)

    async def view(self, campaign_id: UUID, kind: str, position: int | None = None,
                   version: int | None = None) -> bytes | None:
        """The read model ``kind`` of now (``board_of``, ``ledgers_of``), as JSON, if the
        writer holds the campaign as stored (including ``position``; at ``version`` exactly
        if given); else None. From :attr:`held` when it can tell (:mod:`api.held_views`)."""
        shown = self.held.get(campaign_id, kind, position, version)
        if shown is not None:
            return shown
        found: tuple[bytes, int] | None = await self._ask(
            "v", view_request(campaign_id, kind, position, version))
        if found is None:
            return None
        shown, at = found
        self.held.put(campaign_id, kind, at, shown)
        return shown

    async def latest(self, campaign_id: UUID, position: int | None = None) -> Campaign | None:
        """``Committer.latest`` in the writer process."""
        found: Campaign | None = await self._ask("l", (campaign_id.bytes, position))
        return found

    async def call(self, operation: Callable[..., Any], *args: Any,
                   invalidates: UUID | None = None, **kwargs: Any) -> Any:
        """A named write (:mod:`api.operations`) in turn with the commands."""
        try:
            return await self._ask("c", (operation, args, kwargs, invalidates))
        finally:
            if invalidates is not None:
                self.held.drop(invalidates)


def _wait(process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        log.error("the writer process did not stop within %.0f s: killed", timeout)
        process.kill()
        process.wait()
